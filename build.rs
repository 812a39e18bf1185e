//! Builds the faketime shim (`src/real/faketime_shim.c`) once, at build time, so running
//! clock faults on real nodes needs no C compiler. The shared object is embedded in the
//! binary (`src/real/faketime.rs`) and written next to the nodes when a run needs it.
//!
//! The `cc` crate finds the same C compiler Rust links with. If it cannot build the shim
//! (not Linux with glibc, or no compiler), the build still succeeds with an empty shim,
//! and a real run that needs clock faults says why it cannot run them.

use std::path::PathBuf;

fn main() {
    let source = "src/real/faketime_shim.c";
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shim = out.join("faketime_shim.so");
    let why_not = build(source, &shim).err();
    if let Some(why) = &why_not {
        println!("cargo:warning=faketime shim not built ({why}): real-backend clock faults will be refused");
        std::fs::write(&shim, b"").expect("write an empty shim into OUT_DIR");
    }
    std::fs::write(out.join("faketime_shim.why"), why_not.unwrap_or_default()).expect("write into OUT_DIR");
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
