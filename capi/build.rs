//! Names the shared library by its ABI version on Linux (its SONAME): `libtelamalloc_c.so.0.1`
//! for every 0.1.x release, `libtelamalloc_c.so.1` for every 1.x, so a program linked against
//! one release loads any later compatible one. `install.sh` makes the matching links.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = env!("CARGO_PKG_VERSION_MAJOR");
        let abi = if major == "0" {
            format!("0.{}", env!("CARGO_PKG_VERSION_MINOR"))
        } else {
            major.to_string()
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtelamalloc_c.so.{abi}");
    }
}
