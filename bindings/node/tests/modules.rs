//! The binding's modules form a DAG: no `crate::` path closes a circle
//! (see `bindings/module_graph.rs`).

#[path = "../../module_graph.rs"]
mod module_graph;

#[test]
fn the_modules_form_no_circle() {
    module_graph::assert_no_circle(env!("CARGO_MANIFEST_DIR"));
}
