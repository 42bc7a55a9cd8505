//! Query strings and form bodies, as Spring binds them: `a=1&b=2`, percent-decoded, `+` as a
//! space, the first value of a repeated name. Bounded: the caller checks the length
//! (`--http-max-query-bytes`) and at most [`MAX_PARAMS`] parameters are kept.

/// The most parameters a request may carry.
pub(crate) const MAX_PARAMS: usize = 32;

/// A request's parameters, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Params(Vec<(String, String)>);

/// Why parameters were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ParamsError {
    /// More than [`MAX_PARAMS`].
    #[error("more than 32 parameters")]
    TooMany,
}

impl Params {
    /// Adds the parameters of `text` (a query string or form body).
    pub(crate) fn add(&mut self, text: &str) -> Result<(), ParamsError> {
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            if self.0.len() >= MAX_PARAMS {
                return Err(ParamsError::TooMany);
            }
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            self.0.push((decode(name), decode(value)));
        }
        Ok(())
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Percent-decodes `text` (`+` as a space); a bad escape stays as it is, invalid UTF-8 becomes
/// U+FFFD (such a name then fails the tag rules).
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_decoded_and_bounded() {
        let mut p = Params::default();
        p.add("bizType=a%3Ab&token=x+y&batchSize=10&bizType=second&flag")
            .unwrap();
        assert_eq!(p.get("bizType"), Some("a:b"));
        assert_eq!(p.get("token"), Some("x y"));
        assert_eq!(p.get("flag"), Some(""));
        assert_eq!(p.get("nope"), None);
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        let many = vec!["a=1"; MAX_PARAMS + 1].join("&");
        assert_eq!(Params::default().add(&many), Err(ParamsError::TooMany));
    }
}
