//! Every store keeps the server's users alike: SQLite always, and PostgreSQL, MySQL (each in a
//! database of its own) and etcd (under a key prefix of its own) when ci/services.sh runs them.

use idforge_store::{Store, UserRow};
use idforge_testkit::{fresh_database, service_url, unique};

/// Putting a user twice keeps one; deleting says whether there was one to delete.
async fn keeps_users(url: &str) {
    let store = Store::open(url).await.unwrap();
    let user = UserRow {
        name: "u".into(),
        hash: "h".into(),
        perms: "admin".into(),
    };
    store.put_user(&user).await.unwrap();
    store.put_user(&user).await.unwrap();
    assert_eq!(store.users().await.unwrap(), [user], "{url}");
    assert!(store.delete_user("u").await.unwrap(), "{url}");
    assert!(!store.delete_user("u").await.unwrap(), "{url}");
    assert!(store.users().await.unwrap().is_empty(), "{url}");
    store.close().await;
}

#[test]
fn every_store_keeps_users() {
    let dir = tempfile::tempdir().unwrap();
    let mut urls = vec![format!(
        "sqlite://{}/store.db?mode=rwc",
        dir.path().display()
    )];
    urls.extend(fresh_database("IDFORGE_TEST_POSTGRES_URL", "users"));
    urls.extend(fresh_database("IDFORGE_TEST_MYSQL_URL", "users"));
    urls.extend(
        service_url("IDFORGE_TEST_ETCD_URL").map(|base| format!("{base}/{}", unique("users"))),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for url in &urls {
        runtime.block_on(keeps_users(url));
    }
}
