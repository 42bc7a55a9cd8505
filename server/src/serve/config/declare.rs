//! The `settings!` macro: one row per setting of `idforge serve`, from which come the clap
//! argument (flag, environment variable, value name, help with its default), the TOML key (the
//! flag without dashes), the merge of flags over the file, a getter that applies the default and
//! checks the bounds, and the [`Setting`] row that the documentation tables and the example
//! `idforge.toml` are made from ([`super::reference`]).
//!
//! A row reads:
//!
//! ```text
//! /// One-line doc (the help text; more lines are joined).
//! ["Group"] field: Type = DEFAULT, "VALUE-NAME", "IDFORGE_ENV" [, min N] [, max N]
//!     [, bare true] [, limit "what happens past it"] [, example "toml value"]
//!     [, sample "toml value"];
//! ```
//!
//! DEFAULT is `{ expr }` (a typed default: the getter `ServeArgs::field()` returns it when the
//! setting is not given), `["text"]` (a default that depends on other settings, described), or
//! `[]` (unset). `example` is set in the packaged `idforge.toml`, `sample` shown there commented
//! out. `bare true` lets a boolean flag go without a value (`--ha` means `--ha true`).

use crate::serve::setting_error::SettingError;

/// One setting, as the documentation shows it.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The field, in snake case; the flag and TOML key are it in kebab case.
    pub field: &'static str,
    /// The group it is listed under.
    pub group: &'static str,
    /// The value's name in `--help` (`N`, `MS`, `FILE`).
    pub value: &'static str,
    /// The environment variable.
    pub env: &'static str,
    /// The doc comment's lines.
    pub doc: &'static [&'static str],
    /// The default as text (`None`: unset).
    pub default: fn() -> Option<String>,
    /// Whether the default is described in words (it depends on other settings) rather than a
    /// value.
    pub described: bool,
    /// The least value allowed.
    pub min: Option<&'static str>,
    /// The largest value allowed.
    pub max: Option<&'static str>,
    /// What happens past it, for the settings that bound what a client can make the server hold.
    pub limit: Option<&'static str>,
    /// The value the packaged `idforge.toml` sets (others are listed commented out).
    pub example: Option<&'static str>,
    /// A value the packaged `idforge.toml` shows, commented out, for a setting with no default.
    pub sample: Option<&'static str>,
}

impl Setting {
    /// The flag's and TOML key's name: `max-request-bytes`.
    pub fn name(&self) -> String {
        self.field.replace('_', "-")
    }

    /// The doc as one line.
    pub fn doc_line(&self) -> String {
        self.doc
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The help text `--help` prints: the doc and the default.
    pub fn help(&self) -> String {
        match (self.default)() {
            Some(d) => format!("{} [default: {d}]", self.doc_line().trim_end_matches('.')),
            None => self.doc_line().trim_end_matches('.').to_owned(),
        }
    }
}

/// Checks VALUE against a setting's bounds, with the message every setting shares.
pub(super) fn check_bounds<T: PartialOrd + std::fmt::Display>(
    field: &str,
    value: T,
    min: Option<T>,
    max: Option<T>,
) -> Result<T, SettingError> {
    let name = field.replace('_', "-");
    match (min, max) {
        (Some(lo), Some(hi)) if value < lo || value > hi => Err(SettingError::OutOfRange {
            name,
            value: value.to_string(),
            min: lo.to_string(),
            max: hi.to_string(),
        }),
        (Some(lo), None) if value < lo => Err(SettingError::Below {
            name,
            value: value.to_string(),
            min: lo.to_string(),
        }),
        (None, Some(hi)) if value > hi => Err(SettingError::Above {
            name,
            value: value.to_string(),
            max: hi.to_string(),
        }),
        _ => Ok(value),
    }
}

/// Declares the settings: see the module doc.
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])+
        [$group:literal] $field:ident: $ty:ty = $default:tt, $value:literal, $env:literal
        $(, min $min:literal)? $(, max $max:literal)? $(, bare $bare:literal)?
        $(, limit $limit:literal)? $(, example $example:literal)? $(, sample $sample:literal)?;
    )+) => {
        /// The settings of `idforge serve`: each a flag, an `IDFORGE_*` environment variable
        /// and a key of the `--config` TOML file (the flag without its dashes). Declared once,
        /// in `settings.rs`.
        #[derive(Debug, Clone, Default, clap::Args, serde::Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
        pub struct ServeArgs {
            /// A TOML file with any of these settings (flags and environment variables win over
            /// it).
            #[arg(long, env = "IDFORGE_CONFIG", value_name = "FILE")]
            #[serde(skip)]
            pub config: Option<std::path::PathBuf>,
            $(
                $(#[doc = $doc])+
                #[arg(long, env = $env, value_name = $value,
                      help = $crate::serve::config::help(stringify!($field))
                      $(, num_args = 0..=1, default_missing_value = stringify!($bare))?)]
                pub $field: Option<$ty>,
            )+
        }

        /// Every setting, in declaration order (`--config` aside).
        pub const SETTINGS: &[Setting] = &[$(
            Setting {
                field: stringify!($field),
                group: $group,
                value: $value,
                env: $env,
                doc: &[$($doc),+],
                default: settings!(@text $default),
                described: settings!(@described $default),
                min: settings!(@opt $($min)?),
                max: settings!(@opt $($max)?),
                limit: settings!(@str $($limit)?),
                example: settings!(@str $($example)?),
                sample: settings!(@str $($sample)?),
            },
        )+];

        impl ServeArgs {
            /// These settings where given, else OTHER's (flags over the file).
            pub(super) fn or(self, other: ServeArgs) -> ServeArgs {
                ServeArgs {
                    config: self.config.or(other.config),
                    $($field: self.$field.or(other.$field),)+
                }
            }

            $(settings!(@getter $field: $ty = $default, [$($min)?], [$($max)?]);)+
        }
    };
    (@opt) => { None };
    (@str) => { None };
    (@str $v:literal) => { Some($v) };
    (@opt $v:literal) => { Some(stringify!($v)) };
    (@text {$e:expr}) => { || Some(($e).to_string()) };
    (@text [$t:literal]) => { || Some($t.to_owned()) };
    (@text []) => { || None };
    (@described [$t:literal]) => { true };
    (@described $other:tt) => { false };
    (@getter $field:ident: $ty:ty = {$e:expr}, [], []) => {
        /// The setting as given, else its default.
        pub fn $field(&self) -> Result<$ty, SettingError> {
            Ok(self.$field.clone().unwrap_or_else(|| ($e).into()))
        }
    };
    (@getter $field:ident: $ty:ty = {$e:expr}, [$($min:literal)?], [$($max:literal)?]) => {
        /// The setting as given, else its default; refused outside its bounds.
        pub fn $field(&self) -> Result<$ty, SettingError> {
            let value: $ty = self.$field.clone().unwrap_or_else(|| ($e).into());
            check_bounds(stringify!($field), value, settings!(@opt_v $($min)?), settings!(@opt_v $($max)?))
        }
    };
    (@getter $field:ident: $ty:ty = $other:tt, [$($min:literal)?], [$($max:literal)?]) => {};
    (@opt_v) => { None };
    (@opt_v $v:literal) => { Some($v) };
}

pub(super) use settings;
