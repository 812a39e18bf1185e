//! Builds lockstorm's two preload shims once, at build time, so running them needs no C
//! compiler. Each shared object is embedded in the binary and written out when a run
//! needs it:
//! - `src/real/faketime_shim.c` (`src/real/faketime.rs`): clock faults on real nodes;
//! - `src/real/deployment/bind_shim.c` (`src/real/deployment/source.rs`): a worker's
//!   connections to a Sentinel deployment come from the worker's own loopback IP.
//!
//! The `cc` crate finds the same C compiler Rust links with. If it cannot build a shim
//! (not Linux with glibc, or no compiler), the build still succeeds with an empty one,
//! and a real run that needs it says why it cannot run.

use std::path::PathBuf;

fn main() {
    shim(
        "src/real/faketime_shim.c",
        "faketime_shim",
        "real-backend clock faults will be refused",
    );
    shim(
        "src/real/deployment/bind_shim.c",
        "bind_shim",
        "workers on a Sentinel deployment will be refused",
    );
}

/// Builds `source` into `OUT_DIR/NAME.so`, or writes an empty one and says why in
/// `OUT_DIR/NAME.why`.
fn shim(source: &str, name: &str, without: &str) {
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let so = out.join(format!("{name}.so"));
    let why_not = build(source, &so).err();
    if let Some(why) = &why_not {
        println!("cargo:warning={name} not built ({why}): {without}");
        std::fs::write(&so, b"").expect("write an empty shim into OUT_DIR");
    }
    std::fs::write(out.join(format!("{name}.why")), why_not.unwrap_or_default()).expect("write into OUT_DIR");
}

fn build(source: &str, shim: &std::path::Path) -> Result<(), String> {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return Err(format!(
            "the shim is for Linux with glibc, the target is {os}-{env}"
        ));
    }
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .try_get_compiler()
        .map_err(|e| e.to_string())?;
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(shim)
        .arg(source)
        .arg("-ldl")
        .status()
        .map_err(|e| format!("cannot run {}: {e}", compiler.path().display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} exited with {status}", compiler.path().display()))
    }
}
