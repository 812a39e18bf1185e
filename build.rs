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
//!
//! It also sets `LOCKSTORM_COMMIT`, the commit the binary was built from, for the
//! provenance every report records (`src/report/provenance.rs`): `git rev-parse
//! --short=12 HEAD`, with `-dirty` when the files the binary is built from (src/,
//! build.rs, Cargo.toml, Cargo.lock) differ from that commit, and `unknown` outside a
//! git checkout of lockstorm (a crate tarball, or a tarball unpacked inside another
//! repository). It reruns when HEAD, the branch it names, the index or those files
//! change, so the mark is never older than the build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the dirty mark looks at: the files the binary is built from, not the reports
/// or docs beside them.
const BUILT_FROM: &[&str] = &["src", "build.rs", "Cargo.toml", "Cargo.lock"];

fn main() {
    commit();
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

/// Sets `LOCKSTORM_COMMIT` (see the module doc) and says when to look again.
fn commit() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    for path in BUILT_FROM {
        watch(Some(path.to_string()), &manifest);
    }
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&manifest)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_string())
    };
    // Only lockstorm's own checkout: a tarball unpacked inside another repository would
    // otherwise name that repository's commit.
    let ours = git(&["rev-parse", "--show-toplevel"])
        .and_then(|top| Path::new(&top).canonicalize().ok())
        .is_some_and(|top| manifest.canonicalize().is_ok_and(|m| m == top));
    let head = git(&["rev-parse", "--short=12", "HEAD"]).filter(|_| ours);
    let commit = match head {
        None => "unknown".to_string(),
        Some(head) => {
            // HEAD, the branch it names (loose or packed) and the index: a checkout, a
            // commit, a `git add`. In a worktree they live in the main repository's .git.
            for file in ["HEAD", "index", "packed-refs"] {
                watch(git(&["rev-parse", "--git-path", file]), &manifest);
            }
            if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
                watch(git(&["rev-parse", "--git-path", &branch]), &manifest);
            }
            let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
            status.extend_from_slice(BUILT_FROM);
            match git(&status) {
                Some(changes) if changes.is_empty() => head,
                _ => format!("{head}-dirty"),
            }
        }
    };
    println!("cargo:rustc-env=LOCKSTORM_COMMIT={commit}");
}

/// Reruns the build script when `path` (relative to the checkout, or absolute) changes;
/// a file that does not exist is not watched (cargo would rerun on every build).
fn watch(path: Option<String>, manifest: &Path) {
    let Some(path) = path else { return };
    let path = manifest.join(path);
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// Builds `source` into `OUT_DIR/NAME.so`, or writes an empty one and says why in
/// `OUT_DIR/NAME.why`. A shim built from the source as it is now is kept: the script
/// reruns on every change to src/ (for the commit's dirty mark).
fn shim(source: &str, name: &str, without: &str) {
    println!("cargo:rerun-if-changed={source}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let so = out.join(format!("{name}.so"));
    let why = out.join(format!("{name}.why"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(built), Some(src), true) = (modified(&so), modified(Path::new(source)), why.exists()) {
        if built >= src {
            let why_not = std::fs::read_to_string(&why).unwrap_or_default();
            if !why_not.is_empty() {
                println!("cargo:warning={name} not built ({why_not}): {without}");
            }
            return;
        }
    }
    let why_not = build(source, &so).err();
    if let Some(why) = &why_not {
        println!("cargo:warning={name} not built ({why}): {without}");
        std::fs::write(&so, b"").expect("write an empty shim into OUT_DIR");
    }
    std::fs::write(&why, why_not.unwrap_or_default()).expect("write into OUT_DIR");
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
