//! The rule that users stay manageable: a change that would leave users but no admin among them
//! is refused (see the module above).

use super::perms::Perms;

/// Why a change of the users was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserChangeError {
    /// The change would leave users none of whom is an admin, on a server without
    /// `requirepass`: no one could manage the users any more. The message says what to do.
    NoAdminLeft(String),
    /// The store (or hashing the password) failed.
    Store(String),
}

impl std::fmt::Display for UserChangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserChangeError::NoAdminLeft(m) | UserChangeError::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for UserChangeError {}

/// Whether the users, after `name` is set to `perms` (`None`: deleted), could still be managed;
/// `current` maps each user to whether it is an admin. Users that are all gone are fine (auth is
/// off again, as on a fresh server); so is any change while `requirepass` gives the `default`
/// user every right.
pub(super) fn check_admin_left<'a>(
    requirepass: bool,
    current: impl IntoIterator<Item = (&'a str, bool)>,
    name: &str,
    perms: Option<&Perms>,
) -> Result<(), UserChangeError> {
    if requirepass {
        return Ok(());
    }
    let mut others = 0usize;
    let mut other_admins = 0usize;
    let mut was_admin = false;
    let mut existed = false;
    for (user, admin) in current {
        if user == name {
            existed = true;
            was_admin = admin;
        } else {
            others += 1;
            other_admins += usize::from(admin);
        }
    }
    let (users, admins) = match perms {
        Some(p) => (others + 1, other_admins + usize::from(p.is_admin())),
        None => (others, other_admins),
    };
    if users == 0 || admins > 0 {
        return Ok(());
    }
    let message = if others == 0 && !existed {
        format!(
            "the first user must be an admin: users turn auth on, and only an admin can manage \
             them (IDF.USER SET {name} <password> admin, then add the others; or start the \
             server with --requirepass)"
        )
    } else if was_admin {
        format!(
            "'{name}' is the last admin: no one could manage the remaining users (make another \
             user an admin first, or start the server with --requirepass)"
        )
    } else {
        // Users without an admin already (left by an older server): this one would not help.
        format!(
            "the users have no admin: make '{name}' an admin (or start the server with \
             --requirepass)"
        )
    };
    Err(UserChangeError::NoAdminLeft(message))
}

#[cfg(test)]
mod tests {
    use super::super::perms::Perms;
    use super::*;

    #[test]
    fn no_change_leaves_users_without_an_admin() {
        let admin = Perms::all();
        let app = Perms::parse(["alloc:orders"]).unwrap();
        let refused =
            |r: Result<(), UserChangeError>| matches!(r, Err(UserChangeError::NoAdminLeft(_)));
        // The first user: an admin, or nothing (without requirepass).
        assert!(refused(check_admin_left(false, [], "app", Some(&app))));
        assert!(check_admin_left(false, [], "root", Some(&admin)).is_ok());
        assert!(check_admin_left(true, [], "app", Some(&app)).is_ok());
        // With an admin, others may be anything.
        let two = [("root", true), ("app", false)];
        assert!(check_admin_left(false, two, "viewer", Some(&app)).is_ok());
        assert!(check_admin_left(false, two, "app", None).is_ok());
        // The last admin: not deleted nor demoted while others remain...
        assert!(refused(check_admin_left(false, two, "root", None)));
        assert!(refused(check_admin_left(false, two, "root", Some(&app))));
        // ...but once another admin exists, either goes.
        let admins = [("root", true), ("ops", true), ("app", false)];
        assert!(check_admin_left(false, admins, "root", None).is_ok());
        assert!(check_admin_left(false, admins, "root", Some(&app)).is_ok());
        // The only user may go: auth is off again, as on a fresh server.
        assert!(check_admin_left(false, [("root", true)], "root", None).is_ok());
        // requirepass keeps an admin (`default`) whatever the users are.
        assert!(check_admin_left(true, two, "root", None).is_ok());
        let Err(UserChangeError::NoAdminLeft(m)) = check_admin_left(false, [], "app", Some(&app))
        else {
            panic!("refused")
        };
        assert!(m.starts_with("the first user must be an admin"), "{m}");
        for (users, name, perms) in [
            (&[][..], "app", Some(&app)),
            (&two[..], "root", None),
            (&[("app", false)][..], "viewer", Some(&app)),
        ] {
            let Err(e) = check_admin_left(false, users.iter().copied(), name, perms) else {
                panic!("refused")
            };
            let m = e.to_string();
            assert!(!m.contains("  ") && m.contains("--requirepass"), "{m}");
        }
    }
}
