//! Gives libidforge.so a soname with the major version (`libidforge.so.0`), so an incompatible
//! release never replaces the file a service was linked against.
fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libidforge.so.{major}");
    }
}
