//! Chainable setters for the option structs of the ocm-rs crates.
//!
//! Option structs that may gain fields are `#[non_exhaustive]`, so code outside their crate
//! cannot write them as struct literals; each field then gets a setter that takes the struct
//! by value and returns it, `Options::default().field(value)`. [`setters!`](macro@crate::setters)
//! writes those setters from one line a field.

/// Writes, for each listed field, `pub fn field(mut self, field: Type) -> Self` setting
/// `self.field` to the argument, or to the expression after `=>` (which may use the
/// argument by the field's name). Each field's doc comment becomes its setter's.
///
/// ```
/// #[derive(Default)]
/// #[non_exhaustive]
/// pub struct Options {
///     pub limit: usize,
///     pub name: Option<String>,
/// }
///
/// ocm_api::setters!(Options {
///     /// At most `limit` items.
///     limit: usize,
///     /// Named `name`.
///     name: impl Into<String> => Some(name.into()),
/// });
///
/// let options = Options::default().limit(3).name("x");
/// assert_eq!((options.limit, options.name.as_deref()), (3, Some("x")));
/// ```
#[macro_export]
macro_rules! setters {
    ($ty:ty { $( $(#[$doc:meta])* $field:ident : $arg:ty $(=> $value:expr)? ),* $(,)? }) => {
        impl $ty {
            $(
                $(#[$doc])*
                pub fn $field(mut self, $field: $arg) -> Self {
                    self.$field = $crate::setters!(@value $field $(, $value)?);
                    self
                }
            )*
        }
    };
    (@value $field:ident) => { $field };
    (@value $field:ident, $value:expr) => { $value };
}
