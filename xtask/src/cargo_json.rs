//! Reading cargo's `--message-format=json` output with `serde_json`.

use serde_json::Value;

/// The `compiler-artifact` messages among cargo's JSON lines (other
/// messages and non-JSON lines are skipped).
pub fn artifacts(stdout: &str) -> impl Iterator<Item = Value> + '_ {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v["reason"] == "compiler-artifact")
}

/// Whether the artifact was built with the test profile (a test harness:
/// plain binaries that integration tests need are built too, and their
/// *target* also says `"test": true`, so this looks inside `profile`).
pub fn is_test_profile(artifact: &Value) -> bool {
    artifact["profile"]["test"] == true
}

/// Whether the artifact's `target.kind` list holds `kind`.
pub fn target_kind_is(artifact: &Value, kind: &str) -> bool {
    artifact["target"]["kind"]
        .as_array()
        .is_some_and(|k| k.iter().any(|x| x == kind))
}

/// The artifact's `executable` path (`null` for libraries).
pub fn executable(artifact: &Value) -> Option<String> {
    artifact["executable"].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_artifacts() {
        let text = concat!(
            r#"{"reason":"compiler-artifact","target":{"kind":["proc-macro"],"name":"m"},"profile":{"test":false},"executable":null}"#,
            "\nnot json\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["test"],"name":"t"},"profile":{"test":true},"executable":"C:\\t\\x.exe"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        let a: Vec<Value> = artifacts(text).collect();
        assert_eq!(a.len(), 2);
        assert!(target_kind_is(&a[0], "proc-macro") && !is_test_profile(&a[0]));
        assert_eq!(executable(&a[0]), None);
        assert!(is_test_profile(&a[1]));
        assert_eq!(executable(&a[1]).as_deref(), Some(r"C:\t\x.exe"));
    }
}
