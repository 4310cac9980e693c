//! The commands an operator runs by hand, through the real binary: `demo` run twice in one
//! directory, naming the status page first among the addresses to look at.

use crate::support::binary;

fn demo(dir: &std::path::Path) -> std::process::Output {
    let mut cmd = binary::command();
    cmd.current_dir(dir).args([
        "demo",
        "--listen",
        "127.0.0.1:0",
        "--round-every",
        "1",
        "--rounds",
        "1",
    ]);
    cmd.output().expect("the demo runs")
}

fn copy_examples(to: &std::path::Path) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    std::fs::create_dir_all(to.join("campaigns")).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            std::fs::copy(&p, to.join("campaigns").join(p.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn the_demo_runs_again_in_the_same_directory_and_buys_again() {
    let t = tempfile::tempdir().unwrap();
    copy_examples(t.path());

    let first = demo(t.path());
    let second = demo(t.path());

    for (n, out) in [(1, &first), (2, &second)] {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {n}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(": converged, bought "),
            "run {n} bought: {stdout}"
        );
        assert!(!stdout.contains(": failed"), "run {n}: {stdout}");
        let first_address = stdout.lines().find(|l| l.contains("look at:"));
        assert!(
            first_address.is_some_and(|l| l.contains("/   (the status page")),
            "run {n} names the status page first: {stdout}"
        );
    }
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("last demo's journal"),
        "the second run says it started afresh"
    );
}
