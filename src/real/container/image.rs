//! lockstorm's container image: `lockstorm-redis`, built locally FROM scratch out of the
//! host's redis-server (docker/), never pulled.
//!
//! The tag is a hash of what goes into the image (the Dockerfile, the rootfs script and
//! the faketime shim, all compiled into lockstorm), so a lockstorm that changed any of
//! them builds its own image instead of running a stale one. A missing image is built:
//! the rootfs script runs into a temporary build context and the Docker engine builds
//! from it, with no registry involved.

use super::docker_error;
use crate::real::RealError;
use testcontainers::bollard::Docker;
use testcontainers::core::BuildImageOptions;
use testcontainers::runners::AsyncBuilder;
use testcontainers::GenericBuildableImage;

pub const NAME: &str = "lockstorm-redis";

const DOCKERFILE: &str = include_str!("../../../docker/Dockerfile");
const ROOTFS_SCRIPT: &str = include_str!("../../../docker/build-rootfs.sh");
const FAKETIME_SHIM: &str = include_str!("../faketime_shim.c");

/// The tag this lockstorm's image has.
pub fn tag() -> String {
    // FNV-1a over the inputs: stable across builds and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [DOCKERFILE, ROOTFS_SCRIPT, FAKETIME_SHIM] {
        for b in part.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{:012x}", h >> 16)
}

/// The one command that builds the image by hand.
pub fn build_command() -> String {
    format!(
        "docker/build-rootfs.sh && docker build -t {NAME}:{} docker/",
        tag()
    )
}

/// Makes sure `lockstorm-redis:<tag>` exists, building it if it does not.
pub async fn ensure(docker: &Docker) -> Result<String, RealError> {
    let tag = tag();
    let reference = format!("{NAME}:{tag}");
    match docker.inspect_image(&reference).await {
        Ok(_) => return Ok(tag),
        Err(testcontainers::bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => {}
        Err(e) => return Err(docker_error(&format!("inspect the image {reference}"), e)),
    }
    crate::errln!(
        "lockstorm: building the container image {reference} from this machine's redis-server (once)"
    );
    let context = tempfile::Builder::new()
        .prefix("lockstorm-image-")
        .tempdir()
        .map_err(|e| RealError::Io("create a build context".into(), e))?;
    let failed = |why: String| {
        RealError::Docker(format!(
            "cannot build the container image {reference}: {why}; build it by hand with `{}`",
            build_command()
        ))
    };
    let write = |name: &str, text: &str| {
        let path = context.path().join(name);
        std::fs::write(&path, text).map_err(|e| RealError::Io(format!("write {}", path.display()), e))
    };
    write("Dockerfile", DOCKERFILE)?;
    write("build-rootfs.sh", ROOTFS_SCRIPT)?;
    write("faketime_shim.c", FAKETIME_SHIM)?;
    let out = std::process::Command::new("bash")
        .arg(context.path().join("build-rootfs.sh"))
        .arg(context.path().join("rootfs"))
        .arg(context.path())
        .output()
        .map_err(|e| RealError::Io("run bash for the image's rootfs".into(), e))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(failed(
            stderr
                .trim()
                .lines()
                .last()
                .unwrap_or("the rootfs script failed")
                .into(),
        ));
    }
    std::fs::remove_file(context.path().join("build-rootfs.sh")).ok();
    std::fs::remove_file(context.path().join("faketime_shim.c")).ok();
    let _image = GenericBuildableImage::new(NAME, &tag)
        .with_file(context.path(), ".")
        .build_image_with(BuildImageOptions::new())
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok(tag)
}
