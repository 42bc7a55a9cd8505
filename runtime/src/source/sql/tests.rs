//! The SQL source: its URLs, and Leaf's table on SQLite files (created, shared, at its bounds).

use super::*;

#[test]
fn urls_keep_driver_parameters_and_take_ours() {
    let s =
        SqlSource::new("postgres://u@h/db?sslmode=disable&table=ids.leaf&timeout_ms=9").unwrap();
    assert_eq!(s.url, "postgres://u@h/db?sslmode=disable");
    assert_eq!(s.table, "ids.leaf");
    let with_password = SqlSource::new("postgres://u:secret@h/db?table=ids.leaf").unwrap();
    assert_eq!(s.identity().as_deref(), Some("postgres://h/db#ids.leaf"));
    assert_eq!(with_password.identity(), s.identity());
    assert_eq!(s.timeout, Duration::from_millis(9));
    assert!(s.auto_create);
    let s = SqlSource::new("mariadb://root@h:3306/x?auto_create=false").unwrap();
    assert_eq!(
        (s.kind(), s.url.as_str()),
        (SqlKind::MySql, "mysql://root@h:3306/x")
    );
    assert!(!s.auto_create);
    let s = SqlSource::new("sqlite:///tmp/x.db").unwrap();
    assert_eq!(s.url, "sqlite:///tmp/x.db?mode=rwc");
    assert_eq!(s.links.len(), 1, "SQLite locks the file: one connection");
    let s = SqlSource::new("postgres://u@h/db").unwrap();
    assert_eq!(s.links.len(), DEFAULT_POOL);
    let s = SqlSource::new("mysql://u@h/db?pool=64").unwrap();
    assert_eq!(
        (s.links.len(), s.url.as_str()),
        (MAX_POOL, "mysql://u@h/db")
    );
    for bad in [
        "postgres://u@h/db?pool=0",
        "postgres://u@h/db?pool=65",
        "postgres://u@h/db?pool=-1",
        "postgres://u@h/db?pool=four",
        "postgres://u@h/db?pool=",
        "postgres://u@h/db?pool=18446744073709551616",
        "sqlite:///x?table=a;drop",
        "sqlite:///x?table=1a",
        "sqlite:///x?auto_create=maybe",
        "oracle://x",
    ] {
        assert_eq!(
            SqlSource::new(bad).unwrap_err().code(),
            ErrorCode::InvalidUrl,
            "{bad}"
        );
    }
}

#[test]
fn sqlite_hands_out_leaf_ranges_and_refuses_unknown_tags_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/leaf.db", dir.path().display());
    let s = SqlSource::new(&url).unwrap();
    assert_eq!(s.fetch("orders", 10).unwrap(), Segment::new(1, 11).unwrap());
    assert_eq!(s.fetch("orders", 5).unwrap(), Segment::new(11, 16).unwrap());
    // A second source on the same file continues where the first stopped.
    let t = SqlSource::new(&format!("{url}?auto_create=false")).unwrap();
    assert_eq!(t.fetch("orders", 4).unwrap(), Segment::new(16, 20).unwrap());
    let e = t.fetch("missing", 4).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    let e = SqlSource::new(&format!("{url}?table=nope&auto_create=false"))
        .unwrap()
        .fetch("orders", 1)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
    // A tag at the end of BIGINT: refused, never wrapped, and the row is left as it was.
    let mut link = t.connect(Instant::now() + Duration::from_secs(10)).unwrap();
    let conn = link.conn.as_mut().unwrap();
    let sql = "UPDATE leaf_alloc SET max_id = 9223372036854775800 WHERE biz_tag = 'orders'";
    link.runtime
        .block_on(sqlx::query(sql).execute(conn))
        .unwrap();
    drop(link);
    assert_eq!(t.fetch("orders", 4).unwrap().start(), 9223372036854775800);
    assert_eq!(
        t.fetch("orders", 4).unwrap_err().code(),
        ErrorCode::Overflow
    );
    assert_eq!(t.fetch("orders", 3).unwrap().end(), 9223372036854775807);
}
