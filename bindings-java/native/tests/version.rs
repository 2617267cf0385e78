//! The Java classes and the native library are released together: the
//! Maven project version must be this crate's version (the classes refuse a
//! library of another version at load time).

#[test]
fn pom_version_is_the_crate_version() {
    let pom = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../pom.xml")).unwrap();
    // The project's own <version>: the first one after </artifactId> at top level.
    let project = pom.split("<dependencies>").next().unwrap();
    let version = project
        .split("<version>")
        .nth(1)
        .and_then(|v| v.split("</version>").next())
        .expect("pom.xml has a <version>");
    assert_eq!(
        version,
        env!("CARGO_PKG_VERSION"),
        "bindings-java/pom.xml and bindings-java/native/Cargo.toml disagree"
    );
}
