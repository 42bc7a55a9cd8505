//! Leaf's table and the SQL dialect helper that [`SqlSource`](super::SqlSource) and the
//! segment server's SQL stores (`idforge-server`) share. Not needed to draw ids: a client
//! names a table in its URL and [`SqlSource`](super::SqlSource) creates it.

/// Leaf's table, portable to the three databases (Leaf's MySQL DDL differs only in types'
/// display widths and `ON UPDATE CURRENT_TIMESTAMP`, which the update sets explicitly).
pub const LEAF_DDL: &str = "CREATE TABLE IF NOT EXISTS {table} (
    biz_tag VARCHAR(128) NOT NULL PRIMARY KEY,
    max_id BIGINT NOT NULL DEFAULT 1,
    step INT NOT NULL,
    description VARCHAR(256) DEFAULT NULL,
    update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)";

/// `sql` with its `?` placeholders numbered `$1, $2, …`, as PostgreSQL wants them (the SQL
/// here never holds a `?` inside a string literal).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}
