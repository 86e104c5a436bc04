//! What a printer makes once from the names of the results it prints.

/// What a printer makes once from the names of the results it prints (the targets'
/// and rules' ids as it writes them): made again when handed results of other names.
#[derive(Debug)]
pub(crate) struct PerNames<T>(Option<(std::sync::Arc<crate::app::types::Names>, T)>);

impl<T> Default for PerNames<T> {
    fn default() -> Self {
        PerNames(None)
    }
}

impl<T> PerNames<T> {
    /// What `make` makes of `names`, made on the first call for these names.
    pub(crate) fn of(
        &mut self,
        names: &std::sync::Arc<crate::app::types::Names>,
        make: impl FnOnce() -> T,
    ) -> &T {
        if !self
            .0
            .as_ref()
            .is_some_and(|(n, _)| std::sync::Arc::ptr_eq(n, names))
        {
            self.0 = Some((names.clone(), make()));
        }
        &self.0.as_ref().expect("made above").1
    }
}
