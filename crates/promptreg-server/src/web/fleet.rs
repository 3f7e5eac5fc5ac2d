//! The fleet view of a label on the label page: what every instance
//! following it serves, from their reports, refreshed live by
//! `fleet.js`, which reads `/packs/{pack}/labels/{label}/fleet` (the
//! view alone, a page of its own without JavaScript) every few seconds.

use axum::extract::State;
use axum::response::Html;
use minijinja::context;
use promptreg_store::{Fleet, FleetQuery, Label};
use serde::Serialize;

use super::packs::require_read;
use super::page::{PageError, Path, data, render};
use crate::extract::{LabelName, PackName};
use crate::state::AppState;

/// How many instances the page lists.
const SHOWN: usize = 100;

/// The view as the templates show it.
#[derive(Debug, Serialize)]
pub(crate) struct FleetView {
    summary: String,
    revision: Option<u64>,
    total: u64,
    shown: usize,
    instances: Vec<InstanceRow>,
}

#[derive(Debug, Serialize)]
struct InstanceRow {
    instance: String,
    name: Option<String>,
    revision: Option<u64>,
    current: bool,
    source: &'static str,
    online: bool,
    last_seen: String,
    library: String,
    last_error: Option<String>,
}

impl FleetView {
    fn of(fleet: &Fleet) -> FleetView {
        let instances: Vec<InstanceRow> = fleet
            .instances
            .iter()
            .map(|i| InstanceRow {
                instance: i.instance.clone(),
                name: i.name.clone(),
                revision: i.revision,
                current: i.revision.is_some() && i.revision == fleet.revision,
                source: i.source.as_str(),
                online: i.online,
                last_seen: i.last_seen.to_string(),
                library: i.library.clone(),
                last_error: i.last_error.clone(),
            })
            .collect();
        FleetView {
            summary: fleet.summary(),
            revision: fleet.revision,
            total: fleet.instances_total,
            shown: instances.len(),
            instances,
        }
    }
}

/// The fleet view of `label` in `pack`, for a page.
pub(crate) async fn view(
    state: &AppState,
    pack: &str,
    label: &Label,
) -> Result<FleetView, PageError> {
    let query = FleetQuery {
        limit: SHOWN,
        ..FleetQuery::now()
    };
    let fleet = state.store.fleet(pack, label, &query).await?;
    Ok(FleetView::of(&fleet))
}

/// `GET /packs/{pack}/labels/{label}/fleet`: the view alone.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, name)): Path<(PackName, LabelName)>,
) -> Result<Html<String>, PageError> {
    let (pack, name) = (pack.as_str(), name.0);
    require_read(pack)?;
    let fleet = view(&state, pack, &name).await?;
    render(
        "fleet.html",
        context! { pack, label => name.as_str(), fleet => data(&fleet) },
    )
}
