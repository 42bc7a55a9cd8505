//! Glob patterns (`*` any run, `?` any one byte) for tag permissions and `IDF.TAG LIST`.

/// Whether `text` matches `pattern`.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    // Greedy match with one backtrack point: linear for patterns without nested stars.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn stars_and_question_marks() {
        let m = |p: &str, t: &str| glob_match(p.as_bytes(), t.as_bytes());
        assert!(m("*", ""));
        assert!(m("*", "orders"));
        assert!(m("order*", "orders"));
        assert!(m("order*", "order"));
        assert!(m("o*s", "orders"));
        assert!(m("*:eu", "orders:eu"));
        assert!(m("o?ders", "orders"));
        assert!(m("a*b*c", "axxbyyc"));
        assert!(!m("a*b*c", "axxbyy"));
        assert!(!m("orders", "orders2"));
        assert!(!m("order?", "order"));
        assert!(!m("", "x"));
    }
}
