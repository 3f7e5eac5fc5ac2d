//! Tells the tests whether they were built to run on PostgreSQL too:
//! without `PROMPTREG_TEST_DATABASE_URL`, the test that stands for the
//! PostgreSQL half of each test file is ignored, with the reason cargo's
//! summary prints (`promptreg_store::postgres_half!`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(promptreg_postgres)");
    println!("cargo::rerun-if-env-changed=PROMPTREG_TEST_DATABASE_URL");
    if std::env::var("PROMPTREG_TEST_DATABASE_URL").is_ok_and(|url| !url.is_empty()) {
        println!("cargo::rustc-cfg=promptreg_postgres");
    }
}
