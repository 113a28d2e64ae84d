//! libfaketime, for tests that run a process under a fake or stepped
//! clock (Debian's `faketime` package).

/// The library's path, if installed. `.ci/run` installs it and sets
/// `MDS_TEST_REQUIRE_FAKETIME`, so there a test cannot skip: this panics.
/// Elsewhere it says the test is skipped and answers `None`.
pub fn libfaketime() -> Option<&'static str> {
    let found =
        ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
    if found.is_none() {
        assert!(std::env::var_os("MDS_TEST_REQUIRE_FAKETIME").is_none(), "libfaketime is required here");
        println!("skipped: libfaketime not installed (apt-get install faketime)");
    }
    found
}
