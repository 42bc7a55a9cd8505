//! uniffi's own command line: `uniffi-bindgen generate --library LIB --language kotlin ...`.

fn main() {
    uniffi::uniffi_bindgen_main()
}
