//! `idforge_status`: the return value of every fallible call, numbered as
//! `core/testdata/errors.json` (the enum itself is generated from it: `status_codes.rs`).

use runtime::ErrorCode;

use crate::status_codes::for_each_code;
pub use crate::status_codes::idforge_status;

impl idforge_status {
    /// The C enumerator name, NUL-terminated, for `idforge_status_str`.
    pub(crate) fn name_c(value: u32) -> &'static [u8] {
        if value == 0 {
            return b"IDFORGE_STATUS_OK\0";
        }
        match ErrorCode::from_u32(value) {
            Some(code) => c_name(code),
            None => b"IDFORGE_STATUS_UNKNOWN\0",
        }
    }
}

/// `IDFORGE_STATUS_<NAME>\0`, built at compile time from [`ErrorCode::name`].
fn c_name(code: ErrorCode) -> &'static [u8] {
    macro_rules! names {
        ($($code:ident),* $(,)?) => {
            match code {
                $(ErrorCode::$code => {
                    const NAME: &str = ErrorCode::$code.name();
                    const LEN: usize = "IDFORGE_STATUS_".len() + NAME.len() + 1;
                    const BYTES: [u8; LEN] = prefixed(NAME);
                    &BYTES
                })*
                _ => b"IDFORGE_STATUS_UNKNOWN\0",
            }
        };
    }
    for_each_code!(names)
}

const fn prefixed<const LEN: usize>(name: &str) -> [u8; LEN] {
    let prefix = b"IDFORGE_STATUS_";
    let name = name.as_bytes();
    let mut out = [0u8; LEN];
    let mut i = 0;
    while i < prefix.len() {
        out[i] = prefix[i];
        i += 1;
    }
    let mut j = 0;
    while j < name.len() {
        out[i + j] = name[j];
        j += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_status() {
        for code in ErrorCode::ALL {
            assert_eq!(idforge_status::of(code) as u32, code.as_u32(), "{code:?}");
        }
    }

    #[test]
    fn names_match_errors_json() {
        let text = include_str!("../../../core/testdata/errors.json");
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(idforge_status::name_c(0), b"IDFORGE_STATUS_OK\0");
        let rows = json["errors"].as_array().unwrap();
        assert_eq!(rows.len(), ErrorCode::ALL.len());
        for row in rows {
            let value = row["code"].as_u64().unwrap() as u32;
            let want = format!("{}\0", row["c"].as_str().unwrap());
            assert_eq!(idforge_status::name_c(value), want.as_bytes());
        }
        assert_eq!(idforge_status::name_c(99), b"IDFORGE_STATUS_UNKNOWN\0");
    }
}
