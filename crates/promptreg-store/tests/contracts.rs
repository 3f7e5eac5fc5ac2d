//! A label the manifest keeps stable (`[release] stable_contract`) refuses
//! a move that breaks a prompt's contract, unless an admin forces it with
//! a reason, recorded in the revision: on SQLite and on PostgreSQL alike.

mod common;

use common::{MANIFEST, admin, databases, demo, writer};
use promptreg_store::{Candidate, ErrorKind, Label, PackFiles, Share, Store};

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

/// `farewell` offers `open_page(path)`; production keeps its contracts.
fn stable_demo(farewell: &str) -> PackFiles {
    let mut files = demo();
    files.insert(
        "promptreg.toml",
        format!("{MANIFEST}[release]\nstable_contract = [\"production\"]\n"),
    );
    files.insert("defaults/farewell.md", farewell);
    files
}

const WITH_TOOL: &str = "---\ntools:\n  - name: open_page\n    description: Opens a page\n    parameters:\n      type: object\n      properties:\n        path: { type: string }\n---\nGoodbye.\n";
const TWO_TOOLS: &str = "---\ntools:\n  - name: open_page\n    description: Opens a page of the site\n    parameters:\n      type: object\n      properties:\n        path: { type: string }\n  - name: search\n    description: Searches\n---\nGoodbye.\n";
const REQUIRED_PATH: &str = "---\ntools:\n  - name: open_page\n    description: Opens a page\n    parameters:\n      type: object\n      properties:\n        path: { type: string }\n      required: [path]\n---\nGoodbye.\n";
const NO_TOOL: &str = "Goodbye.\n";

async fn release(
    store: &Store,
    actor: &promptreg_store::Actor,
    reason: &str,
) -> Result<(), promptreg_store::Error> {
    store
        .release(
            "demo",
            &Label::latest(),
            &label("production"),
            None,
            actor,
            reason,
        )
        .await
        .map(|_| ())
}

#[tokio::test]
async fn a_breaking_change_is_refused_and_a_compatible_one_goes_through() {
    for db in databases("stable_contract_refuses").await {
        let store = db.open().await;
        store
            .push(&stable_demo(WITH_TOOL), &writer(), "first")
            .await
            .unwrap();
        release(&store, &writer(), "").await.unwrap();
        // An added tool and a new description break nothing.
        store
            .push(&stable_demo(TWO_TOOLS), &writer(), "more")
            .await
            .unwrap();
        release(&store, &writer(), "").await.unwrap();
        // A required parameter and a removed tool do; nothing moves.
        store
            .push(&stable_demo(REQUIRED_PATH), &writer(), "narrow")
            .await
            .unwrap();
        let before = store.revisions("demo", &label("production")).await.unwrap();
        let err = release(&store, &writer(), "").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BreakingChange, "{}: {err}", db.name);
        let message = err.to_string();
        assert!(
            message.contains("label `production` keeps its prompts' contracts stable"),
            "{message}"
        );
        assert!(
            message.contains("farewell v2 -> v3: tool `search` removed"),
            "{message}"
        );
        assert!(
            message
                .contains("farewell v2 -> v3: tool `open_page`, parameter `path` became required"),
            "{message}"
        );
        assert_eq!(
            store.revisions("demo", &label("production")).await.unwrap(),
            before,
            "{}",
            db.name
        );
        // A label that does not keep its contracts moves.
        store
            .release(
                "demo",
                &Label::latest(),
                &label("staging"),
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        // Moving one prompt by hand is held to the same rule.
        let err = store
            .move_label(
                "demo",
                "farewell",
                &label("production"),
                3,
                Some(2),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BreakingChange, "{}", db.name);
    }
}

#[tokio::test]
async fn an_admin_forces_a_breaking_change_with_a_reason_the_revision_records() {
    for db in databases("stable_contract_forced").await {
        let store = db.open().await;
        store
            .push(&stable_demo(WITH_TOOL), &writer(), "first")
            .await
            .unwrap();
        release(&store, &writer(), "").await.unwrap();
        store
            .push(&stable_demo(NO_TOOL), &writer(), "no tools")
            .await
            .unwrap();
        // Forcing is an admin's, with a reason.
        let err = release(&store, &writer().forcing_gates(), "why")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        let err = release(&store, &admin().forcing_gates(), " ")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{}: {err}", db.name);
        release(
            &store,
            &admin().forcing_gates(),
            "the client no longer opens pages",
        )
        .await
        .unwrap();
        let newest = &store.revisions("demo", &label("production")).await.unwrap()[0];
        assert_eq!(
            newest.breaking,
            ["farewell v1 -> v2: tool `open_page` removed"],
            "{}",
            db.name
        );
        assert!(
            newest.reason.contains("the client no longer opens pages"),
            "{}",
            db.name
        );
        // The revision before it broke nothing.
        let first = &store.revisions("demo", &label("production")).await.unwrap()[1];
        assert!(first.breaking.is_empty(), "{}", db.name);
    }
}

#[tokio::test]
async fn a_split_toward_a_breaking_candidate_is_refused() {
    for db in databases("stable_contract_split").await {
        let store = db.open().await;
        store
            .push(&stable_demo(WITH_TOOL), &writer(), "first")
            .await
            .unwrap();
        release(&store, &writer(), "").await.unwrap();
        store
            .push(&stable_demo(NO_TOOL), &writer(), "no tools")
            .await
            .unwrap();
        let share = Share::from_basis_points(1000).unwrap();
        let (production, candidate) = (label("production"), Candidate::newest_of(Label::latest()));
        let err = store
            .start_split("demo", &production, &candidate, share, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BreakingChange, "{}: {err}", db.name);
        let split = store
            .start_split(
                "demo",
                &production,
                &candidate,
                share,
                &admin().forcing_gates(),
                "drop it",
            )
            .await
            .unwrap();
        assert_eq!(
            split.breaking,
            ["farewell v1 -> v2: tool `open_page` removed"],
            "{}",
            db.name
        );
    }
}

/// A shared tool's file belongs to the pack: changing it changes every
/// prompt that names it, and a stable label refuses that as it refuses a
/// prompt's own change.
#[tokio::test]
async fn a_breaking_change_to_a_shared_tool_is_refused_for_every_prompt_naming_it() {
    for db in databases("stable_contract_shared").await {
        let store = db.open().await;
        let mut files = stable_demo("---\ntools: [open_page]\n---\nGoodbye.\n");
        let tool = |required: &str| {
            format!(
                "description: Opens a page\nparameters:\n  type: object\n  properties:\n    path: {{ type: string }}\n  required: [{required}]\n"
            )
        };
        files.insert("tools/open_page.yaml", tool(""));
        store.push(&files, &writer(), "first").await.unwrap();
        release(&store, &writer(), "").await.unwrap();
        // The prompt's own file did not change: its shared tool did.
        files.insert("tools/open_page.yaml", tool("path"));
        store
            .push(&files, &writer(), "path required")
            .await
            .unwrap();
        let err = release(&store, &writer(), "").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BreakingChange, "{}: {err}", db.name);
        assert!(
            err.to_string().contains(
                "farewell v1, by a shared file: tool `open_page`, parameter `path` became required"
            ),
            "{err}"
        );
        // Diffs of the prompt read the pack's shared files too.
        let diff = store
            .diff(
                "demo",
                "farewell",
                &promptreg_store::VersionRef::Number(1),
                &promptreg_store::VersionRef::Number(1),
                None,
            )
            .await
            .unwrap();
        assert!(diff.contract.is_empty(), "{:?}", diff.contract);
    }
}
