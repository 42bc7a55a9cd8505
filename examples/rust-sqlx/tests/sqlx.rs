//! idforge-core's `sqlx`, `serde` and `uuid` features against SQLite and the services'
//! PostgreSQL (`IDFORGE_TEST_POSTGRES_URL`; required when `IDFORGE_REQUIRE_FRAMEWORKS=1`): 8
//! tasks insert 10,000 rows, which come back distinct, in each task's creation order under every
//! column's `ORDER BY`, with the documented column types, and the same after a JSON round trip.

use std::sync::Arc;

use idforge::{Flake128s, Layout, ObjectIds, Snowflake, Ulids, Uuid7, Uuid7s, WorkerId};
use idforge_rust_sqlx::Order;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Pool, Postgres, Row, Sqlite};

const TASKS: usize = 8;
const PER_TASK: usize = 1_250;

/// The generators every task shares.
struct Gens {
    snowflake: Snowflake,
    uuid7: Uuid7s,
    ulid: Ulids,
    oid: ObjectIds,
    flake: Flake128s,
}

fn gens() -> Arc<Gens> {
    Arc::new(Gens {
        snowflake: Snowflake::new(Layout::TWITTER, 1).unwrap(),
        uuid7: Uuid7s::new().unwrap(),
        ulid: Ulids::new().unwrap(),
        oid: ObjectIds::new().unwrap(),
        flake: Flake128s::new(WorkerId::Random).unwrap(),
    })
}

fn order(g: &Gens) -> Order {
    let id = g.snowflake.next().unwrap();
    Order {
        id,
        short: id,
        reference: g.uuid7.next().unwrap(),
        ulid: g.ulid.next().unwrap(),
        oid: g.oid.next().unwrap(),
        flake: g.flake.next().unwrap(),
    }
}

/// What both databases share: insert from 8 tasks, read back, check order, JSON, uuid.
macro_rules! exercise {
    ($pool:expr, $db:ty, $insert:expr) => {{
        let pool: Pool<$db> = $pool;
        let g = gens();
        let mut tasks = Vec::new();
        for task in 0..TASKS {
            let (pool, g) = (pool.clone(), g.clone());
            tasks.push(tokio::spawn(async move {
                let mut made = Vec::with_capacity(PER_TASK);
                for _ in 0..PER_TASK {
                    let o = order(&g);
                    sqlx::query($insert)
                        .bind(o.id as i64)
                        .bind(task as i64)
                        .bind(o.reference)
                        .bind(o.ulid)
                        .bind(o.oid)
                        .bind(o.flake)
                        .execute(&pool)
                        .await
                        .unwrap();
                    made.push(o);
                }
                made
            }));
        }
        let mut made: Vec<Vec<Order>> = Vec::new();
        for t in tasks {
            made.push(t.await.unwrap());
        }
        for column in ["id", "reference", "ulid", "oid", "flake"] {
            let rows = sqlx::query(&format!(
                "SELECT id, task, reference, ulid, oid, flake FROM orders ORDER BY {column}"
            ))
            .fetch_all(&pool)
            .await
            .unwrap();
            assert_eq!(rows.len(), TASKS * PER_TASK);
            let mut per_task: Vec<Vec<Order>> = vec![Vec::new(); TASKS];
            for row in rows {
                let id = row.get::<i64, _>("id") as u64;
                per_task[row.get::<i64, _>("task") as usize].push(Order {
                    id,
                    short: id,
                    reference: row.get("reference"),
                    ulid: row.get("ulid"),
                    oid: row.get("oid"),
                    flake: row.get("flake"),
                });
            }
            // Every task's rows, in that column's order, are the rows it made, in its order.
            assert_eq!(per_task, made, "ORDER BY {column}");
        }
        let all: Vec<&Order> = made.iter().flatten().collect();
        let ids: std::collections::HashSet<u64> = all.iter().map(|o| o.id).collect();
        assert_eq!(ids.len(), TASKS * PER_TASK, "duplicates");
        for o in &all {
            let json = serde_json::to_string(o).unwrap();
            assert!(
                json.starts_with(&format!(r#"{{"id":"{}","short":""#, o.id)),
                "{json}"
            );
            assert_eq!(&serde_json::from_str::<Order>(&json).unwrap(), *o);
            let u = uuid::Uuid::from(o.reference);
            assert_eq!(u.get_version_num(), 7);
            assert_eq!(Uuid7::try_from(u).unwrap(), o.reference);
            assert_eq!(u.to_string(), o.reference.to_string());
        }
        pool
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_10000_rows_from_8_tasks() {
    let dir = std::env::temp_dir().join(format!("idforge-sqlx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = SqliteConnectOptions::new()
        .filename(dir.join("orders.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap();
    sqlx::query(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, task INTEGER NOT NULL, reference TEXT NOT NULL, \
         ulid TEXT NOT NULL, oid BLOB NOT NULL, flake BLOB NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let pool = exercise!(pool, Sqlite, "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)");
    // What SQLite stored, value by value.
    let kinds: Vec<(String, String, String, String, String)> = sqlx::query_as(
        "SELECT DISTINCT typeof(id), typeof(reference), typeof(ulid), typeof(oid), typeof(flake) FROM orders",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let want = ("integer", "text", "text", "blob", "blob");
    let want = (
        want.0.into(),
        want.1.into(),
        want.2.into(),
        want.3.into(),
        want.4.into(),
    );
    assert_eq!(kinds, vec![want]);
    let lengths: (i64, i64, i64, i64) =
        sqlx::query_as("SELECT max(length(reference)), max(length(ulid)), max(length(oid)), max(length(flake)) FROM orders")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(lengths, (36, 26, 12, 16));
    pool.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_10000_rows_from_8_tasks() {
    let Ok(url) = std::env::var("IDFORGE_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("IDFORGE_REQUIRE_FRAMEWORKS").is_err(),
            "IDFORGE_TEST_POSTGRES_URL is not set (ci/services.sh sets it)"
        );
        eprintln!("skipped: IDFORGE_TEST_POSTGRES_URL is not set");
        return;
    };
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .connect(&url)
        .await
        .unwrap();
    let schema = format!("idforge_sqlx_{}", std::process::id());
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .after_connect({
            let schema = schema.clone();
            move |conn, _| {
                let schema = schema.clone();
                Box::pin(async move {
                    sqlx::query(&format!("SET search_path = {schema}"))
                        .execute(conn)
                        .await?;
                    Ok(())
                })
            }
        })
        .connect(&url)
        .await
        .unwrap();
    sqlx::query(
        "CREATE TABLE orders (id bigint PRIMARY KEY, task bigint NOT NULL, reference uuid NOT NULL, \
         ulid varchar(26) NOT NULL, oid bytea NOT NULL, flake bytea NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let pool = exercise!(
        pool,
        Postgres,
        "INSERT INTO orders VALUES ($1, $2, $3, $4, $5, $6)"
    );
    let types: Vec<(String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_schema = $1 AND table_name = 'orders' ORDER BY ordinal_position",
    )
    .bind(&schema)
    .fetch_all(&pool)
    .await
    .unwrap();
    let want: Vec<(String, String)> = [
        ("id", "bigint"),
        ("task", "bigint"),
        ("reference", "uuid"),
        ("ulid", "character varying"),
        ("oid", "bytea"),
        ("flake", "bytea"),
    ]
    .into_iter()
    .map(|(a, b)| (a.into(), b.into()))
    .collect();
    assert_eq!(types, want);
    // A UUID of another version is refused with the parser's error, never read as a UUIDv7.
    let err = sqlx::query_scalar::<_, Uuid7>("SELECT gen_random_uuid()")
        .fetch_one(&pool)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("UUID"), "{err}");
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}
