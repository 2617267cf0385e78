//! Snapshot tests of the generator: the sample API in `tests/sample/api`
//! (every field type and shape of a result) must generate exactly the
//! files in `tests/sample/expected`, for every language. Set
//! `CURSUS_UPDATE_GENERATED=1` to rewrite them after a deliberate change
//! (and read the diff).

use std::path::Path;

fn sample() -> cursus_bridge_gen::Api {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sample/api");
    cursus_bridge_gen::read_api(&dir).unwrap()
}

fn check(name: &str, generated: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sample/expected")
        .join(name);
    if std::env::var_os("CURSUS_UPDATE_GENERATED").is_some() {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == generated,
        "{name}: the generator's output changed; rewrite the snapshots with \
         CURSUS_UPDATE_GENERATED=1 cargo test -p cursus-bridge-gen --test snapshots \
         and review the diff\n--- generated:\n{generated}"
    );
}

#[test]
fn c_entry_points_and_accessors() {
    check("bridge_c.rs", &cursus_bridge_gen::c::generate(&sample()));
}

#[test]
fn jni_entry_points_and_native_bridge() {
    let api = sample();
    check(
        "bridge_jni.rs",
        &cursus_bridge_gen::jni::generate_rust(&api),
    );
    check(
        "NativeBridge.java",
        &cursus_bridge_gen::jni::generate_java(&api),
    );
}

#[test]
fn java_records_and_readers() {
    let files = cursus_bridge_gen::java::generate(&sample());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Inventory.java",
            "Supplier.java",
            "Label.java",
            "ResultReaders.java"
        ],
        "a nested item (Inventory.Item) and a list get no file of their own"
    );
    for (name, text) in &files {
        check(name, text);
    }
}

#[test]
fn go_structs_and_readers() {
    check(
        "results_gen.go",
        &cursus_bridge_gen::golang::generate(&sample()),
    );
}

#[test]
fn cpp_structs_and_readers() {
    check("results.hpp", &cursus_bridge_gen::cpp::generate(&sample()));
}

#[test]
fn python_classes_and_stubs() {
    let api = sample();
    check(
        "results_gen.rs",
        &cursus_bridge_gen::python::generate_rust(&api),
    );
    check(
        "results.pyi",
        &cursus_bridge_gen::python::generate_pyi(&api),
    );
}

#[test]
fn the_stub_section_replaces_only_itself() {
    let section = cursus_bridge_gen::python::generate_pyi(&sample());
    let before = "header\n";
    let once = cursus_bridge_gen::python::splice_pyi(before, &section);
    assert!(once.starts_with("header\n") && once.ends_with(&section));
    let twice = cursus_bridge_gen::python::splice_pyi(&format!("{once}trailer\n"), &section);
    assert_eq!(twice, format!("{once}trailer\n"));
}
