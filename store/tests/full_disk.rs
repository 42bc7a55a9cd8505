//! A write that fails halfway must leave nothing a later read takes for committed: a persist
//! that reports success is in the store for every other reader, whatever failed before it.

use idforge_store::{Store, TagMove, TagRow};
use idforge_testkit::tmpfs::Tmpfs;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `max_id` of `tag` as a fresh connection (another process) reads it.
async fn committed(url: &str, tag: &str) -> i64 {
    let other = Store::open(url).await.unwrap();
    let row = other.tag(tag).await.unwrap().unwrap();
    other.close().await;
    row.max_id
}

/// SQLite on a full disk: persists fail while it is full; once space is back, every persist
/// that reports success is committed (before the fix, a connection whose failed transaction
/// SQLite had rolled back by itself turned every later transaction into a savepoint of a
/// transaction that never ended: writes it saw itself, and no one else ever did).
#[test]
fn sqlite_full_disk_never_reports_an_uncommitted_persist() {
    let Some(fs) = Tmpfs::mount("1m") else { return };
    let url = format!("sqlite://{}/store.db?mode=rwc", fs.path().display());
    runtime().block_on(async {
        let store = Store::open(&url).await.unwrap();
        let tags: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        let mut max = vec![1i64; tags.len()];
        for tag in &tags {
            let row = TagRow {
                tag: tag.clone(),
                max_id: 1,
                step: 1000,
                description: None,
            };
            assert!(store.create_tag(&row).await.unwrap());
        }
        let filler = fs.fill();
        // Many persists against the full disk, each moving every tag (the failures differ:
        // the commit, the write-ahead log, a statement).
        let mut failed = 0;
        for round in 0..200 {
            let moves = each_up_1000(&tags, &max);
            let clocks = [(format!("c{round}"), 1_000 + round)];
            match store.persist(&moves, &clocks).await {
                Ok(conflicts) => {
                    for (i, tag) in tags.iter().enumerate() {
                        if !conflicts.contains(tag) {
                            max[i] += 1000;
                        }
                    }
                }
                Err(_) => failed += 1,
            }
        }
        assert!(
            failed > 0,
            "the full disk failed no persist: the test proves nothing"
        );
        std::fs::remove_file(filler).unwrap();
        // Space is back: persists succeed again, and what they report is what others read.
        for _ in 0..20 {
            let moves = each_up_1000(&tags, &max);
            let conflicts = store.persist(&moves, &[]).await.unwrap();
            for (i, tag) in tags.iter().enumerate() {
                // What this server believes it holds must be what the store holds.
                let stored = store.tag(tag).await.unwrap().unwrap().max_id;
                if conflicts.contains(tag) {
                    max[i] = stored;
                } else {
                    max[i] += 1000;
                    assert_eq!(
                        stored, max[i],
                        "{tag}: the server reads its own uncommitted write"
                    );
                }
            }
        }
        for (tag, &m) in tags.iter().zip(&max) {
            assert_eq!(
                committed(&url, tag).await,
                m,
                "{tag}: reported committed, not in the store"
            );
        }
        store.close().await;
    });
}

/// A persist that moves every tag up by 1000 from what this server believes it holds.
fn each_up_1000(tags: &[String], max: &[i64]) -> Vec<TagMove> {
    tags.iter()
        .zip(max)
        .map(|(tag, &old)| TagMove {
            tag: tag.clone(),
            old,
            new: old + 1000,
        })
        .collect()
}
