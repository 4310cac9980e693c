//! Saved search filters (operation 7) and autobuyers (operations 8, 9, 10).
//!
//! The API has no update, delete or list for autobuyers; the sandbox keeps their settings
//! and running state so tests can see exactly what a client created and switched.

pub(crate) use super::entities::{Autobuyer, AutobuyerSpec, AutobuyerUrl, Filter, Range};
use super::state::{Outcome, Params, Rejection, World};
use crate::money::Money;

impl World {
    /// Operation 7: a named filter; price bounds non-negative and ordered.
    pub(crate) fn add_filter(
        &mut self,
        name: &str,
        ranges: &[Range],
        params: Params,
    ) -> Outcome<i64> {
        if name.trim().is_empty() {
            return Err(Rejection::new("filter name is blank"));
        }
        for r in ranges {
            let negative = [r.from, r.to].into_iter().flatten().any(Money::is_negative);
            if negative {
                return Err(Rejection::new(format!(
                    "{} bounds must not be negative",
                    r.name
                )));
            }
            if let (Some(from), Some(to)) = (r.from, r.to)
                && from > to
            {
                return Err(Rejection::new(format!(
                    "{}From is above {}To",
                    r.name, r.name
                )));
            }
        }
        self.ensure_room(self.filters.len(), "filters")?;
        let id = self.fresh_id();
        let name = name.to_string();
        let owner = self.caller;
        self.filters.insert(
            id,
            Filter {
                id,
                owner,
                name,
                params,
            },
        );
        Ok(id)
    }

    /// Operation 8: stopped when created, unless the sandbox was configured otherwise.
    pub(crate) fn create_autobuyer(
        &mut self,
        project_id: i64,
        spec: AutobuyerSpec,
    ) -> Outcome<i64> {
        self.project(project_id)?;
        if spec.name.trim().is_empty() {
            return Err(Rejection::new("autobuyer name is blank"));
        }
        if !self.filters.contains_key(&spec.filter_id) {
            return Err(Rejection::new(format!(
                "search filter {} does not exist",
                spec.filter_id
            )));
        }
        if spec.urls.is_empty() {
            return Err(Rejection::new("urls is empty"));
        }
        for u in &spec.urls {
            self.url_in_project(project_id, u.url_id)?;
            if u.monthly_budget.is_negative() || u.total_links_limit < 0 || u.daily_links_limit < 0
            {
                return Err(Rejection::new(format!(
                    "limits of url {} must not be negative",
                    u.url_id
                )));
            }
        }
        self.ensure_room(self.autobuyers.len(), "autobuyers")?;
        let id = self.fresh_id();
        let running = self.rules.autobuyers_start_running;
        let owner = self.projects.get(&project_id).map_or(0, |p| p.owner);
        self.autobuyers.insert(
            id,
            Autobuyer {
                id,
                owner,
                project_id,
                spec,
                running,
            },
        );
        Ok(id)
    }

    /// Operations 9 and 10: every id must exist, else nothing changes.
    pub(crate) fn switch_autobuyers(&mut self, ids: &[i64], running: bool) -> Outcome<Vec<i64>> {
        if ids.is_empty() {
            return Err(Rejection::new("autobuyersIds is empty"));
        }
        if let Some(missing) = ids.iter().find(|id| !self.autobuyers.contains_key(id)) {
            return Err(Rejection::new(format!(
                "autobuyer {missing} does not exist"
            )));
        }
        for id in ids {
            if let Some(a) = self.autobuyers.get_mut(id) {
                a.running = running;
            }
        }
        Ok(ids.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxConfig;

    #[test]
    fn switching_with_one_unknown_id_changes_no_autobuyer() {
        let mut world = World::new(&SandboxConfig::new("t", "k"));
        let (project, url_id, _) = world.add_project("https://acme.example").unwrap();
        let filter = world.add_filter("f", &[], Params::new()).unwrap();
        let urls = vec![AutobuyerUrl {
            url_id,
            monthly_budget: Money::from_rubles(10),
            total_links_limit: 1,
            daily_links_limit: 1,
        }];
        let spec = AutobuyerSpec {
            name: "a".into(),
            is_auto_approve: false,
            filter_id: filter,
            urls,
        };
        let id = world.create_autobuyer(project, spec).unwrap();

        let result = world.switch_autobuyers(&[id, id + 1_000], true);

        assert!(result.is_err());
        assert!(!world.autobuyers[&id].running);
    }

    #[test]
    fn a_filter_whose_lower_bound_is_above_its_upper_bound_is_rejected() {
        let mut world = World::new(&SandboxConfig::new("t", "k"));
        let range = Range {
            name: "priceRent",
            from: Some(Money::from_rubles(80)),
            to: Some(Money::from_rubles(10)),
        };
        assert!(world.add_filter("f", &[range], Params::new()).is_err());
    }
}
