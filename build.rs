//! Build script of the `mds` binary: the commit it is built from, shown by
//! `mds_build_info{commit}` on `/metrics`. `MDS_BUILD_COMMIT` at build
//! time wins (a build from a source tarball); else `git rev-parse` of the
//! checkout; else `unknown`.

use std::path::Path;
use std::process::Command;

/// `git ARGS`' output, trimmed, if git ran and succeeded.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    out.status.success().then(|| text.trim().to_owned()).filter(|t| !t.is_empty())
}

fn main() {
    println!("cargo:rerun-if-env-changed=MDS_BUILD_COMMIT");
    let commit = std::env::var("MDS_BUILD_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=MDS_BUILD_COMMIT={commit}");
    // Run again when HEAD moves: a checkout (HEAD) or a commit (the
    // branch's ref, loose or packed). Only files that exist: a missing one
    // would run this on every build.
    let (Some(dir), Some(common)) = (git(&["rev-parse", "--git-dir"]), git(&["rev-parse", "--git-common-dir"])) else {
        return;
    };
    let mut watched = vec![format!("{dir}/HEAD"), format!("{common}/packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(format!("{common}/{branch}"));
    }
    for path in watched.iter().filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
