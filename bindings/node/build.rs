//! Link flags for a Node addon (symbols resolved from the `node` process at load time).

fn main() {
    napi_build::setup();
}
