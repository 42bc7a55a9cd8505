//! Every store keeps the server's tags, clocks and users alike: SQLite always, and PostgreSQL,
//! MySQL (each in a database of its own) and etcd (under a key prefix of its own) when
//! ci/services.sh runs them. What only one store has (etcd's fence, SQL's terms) is tested beside
//! that store.

use idforge_store::{Store, TagMove, TagRow, UserRow};
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

/// Holds etcd's leader key and fences on it, as the election would: etcd refuses a write from
/// anyone else. The SQL stores write without a term until one is begun.
async fn lead(store: &Store) {
    if let Some(etcd) = store.etcd() {
        let put = etcd
            .client()
            .put(etcd.key("leader"), "test 127.0.0.1:1", None)
            .await
            .unwrap();
        etcd.set_fence(put.header().unwrap().revision());
    }
}

/// A tag is created once, moves only from the mark it holds, and is dropped once; a clock is
/// created, then only moves forward.
async fn moves_tags_and_clocks(url: &str) {
    let store = Store::open(url).await.unwrap();
    lead(&store).await;
    let row = TagRow {
        tag: "orders".into(),
        max_id: 1,
        step: 100,
        description: Some("d".into()),
    };
    assert!(store.create_tag(&row).await.unwrap(), "{url}");
    assert!(
        !store.create_tag(&row).await.unwrap(),
        "exists already: {url}"
    );
    assert_eq!(store.tag("orders").await.unwrap().unwrap(), row, "{url}");
    let m = |old, new| TagMove {
        tag: "orders".into(),
        old,
        new,
    };
    assert!(
        store.persist(&[m(1, 101)], &[]).await.unwrap().is_empty(),
        "{url}"
    );
    // A stale compare is a conflict, reported per tag, and changes nothing.
    assert_eq!(
        store.persist(&[m(1, 201)], &[]).await.unwrap(),
        ["orders"],
        "{url}"
    );
    assert_eq!(
        store.tag("orders").await.unwrap().unwrap().max_id,
        101,
        "{url}"
    );

    store.persist(&[], &[("c".into(), 50)]).await.unwrap();
    store.persist(&[], &[("c".into(), 40)]).await.unwrap();
    assert_eq!(store.clock("c").await.unwrap(), Some(50), "{url}");
    store.persist(&[], &[("c".into(), 1000)]).await.unwrap();
    assert_eq!(store.clock("c").await.unwrap(), Some(1000), "{url}");
    assert_eq!(store.clock("d").await.unwrap(), None, "{url}");

    let tags = store.tags().await.unwrap();
    assert_eq!(tags.len(), 1, "{url}");
    assert_eq!(tags[0].description.as_deref(), Some("d"), "{url}");
    assert!(store.drop_tag("orders").await.unwrap(), "{url}");
    assert!(!store.drop_tag("orders").await.unwrap(), "{url}");
    assert_eq!(store.tag("orders").await.unwrap(), None, "{url}");
    store.close().await;
}

#[test]
fn every_store_keeps_tags_clocks_and_users() {
    let dir = tempfile::tempdir().unwrap();
    let mut urls = vec![format!(
        "sqlite://{}/store.db?mode=rwc",
        dir.path().display()
    )];
    urls.extend(fresh_database("IDFORGE_TEST_POSTGRES_URL", "every_store"));
    urls.extend(fresh_database("IDFORGE_TEST_MYSQL_URL", "every_store"));
    urls.extend(
        service_url("IDFORGE_TEST_ETCD_URL")
            .map(|base| format!("{base}/{}", unique("every-store"))),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for url in &urls {
        runtime.block_on(keeps_users(url));
        runtime.block_on(moves_tags_and_clocks(url));
    }
}
