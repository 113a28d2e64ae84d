//! The page envelope of list endpoints: `{"data": [...], "next_cursor":
//! ..., "has_more": ...}`, and on an empty page whose exact-match filter
//! names a value that does not exist, `"hint"` ([`Hint`]).
//!
//! [`Page`] is the one definition. The server does not build a `Page` (its
//! rows are already JSON bytes in the catalog); it writes the same envelope
//! with [`write_json`], kept here beside the type, and a test checks that
//! what `write_json` writes deserializes into `Page` and equals what serde
//! writes for it.

use serde::{Deserialize, Serialize};

use crate::facets::Hint;

/// One page of a list endpoint, as the API sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The rows of this page, in the endpoint's order.
    pub data: Vec<T>,
    /// Cursor of the next page: a string when `has_more`, else `null`.
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    pub has_more: bool,
    /// On an empty page of the company or news list whose `industry`,
    /// `category` or `tag` names a value that does not exist: the nearest
    /// existing values. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

impl<T> Page<T> {
    /// A page without a hint.
    pub fn new(data: Vec<T>, next_cursor: Option<String>, has_more: bool) -> Self {
        Page { data, next_cursor, has_more, hint: None }
    }

    /// The same page with each row made by `f` (the cursor still names the
    /// last row's position).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            data: self.data.into_iter().map(f).collect(),
            next_cursor: self.next_cursor,
            has_more: self.has_more,
            hint: self.hint,
        }
    }
}

/// Writes a page's JSON to `out`: `rows` writes the rows, already JSON and
/// separated by commas, between the brackets of `data`. The bytes are
/// exactly those of serializing a [`Page`] of the same rows (and `hint`).
pub fn write_json(
    out: &mut Vec<u8>,
    rows: impl FnOnce(&mut Vec<u8>),
    next_cursor: Option<&str>,
    has_more: bool,
    hint: Option<&Hint>,
) {
    out.extend_from_slice(b"{\"data\":[");
    rows(out);
    out.extend_from_slice(b"],\"next_cursor\":");
    serde_json::to_writer(&mut *out, &next_cursor).expect("a string serializes");
    out.extend_from_slice(if has_more { b",\"has_more\":true" } else { b",\"has_more\":false" });
    if let Some(hint) = hint {
        out.extend_from_slice(b",\"hint\":");
        serde_json::to_writer(&mut *out, hint).expect("a hint serializes");
    }
    out.push(b'}');
}

#[cfg(feature = "openapi")]
mod schema {
    //! The OpenAPI schemas of the pages: `Page<Company>` is named
    //! `V1CompanyPage`, `Page<ArticleSummary>` `V1NewsPage` (a generic
    //! type's derived name would be `Page_V1Company`).

    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    use utoipa::openapi::{Ref, RefOr, Schema};
    use utoipa::{PartialSchema, ToSchema};

    use super::Page;
    use crate::facets::Hint;
    use crate::{ArticleSummary, Company};

    /// The schema of a page of `T`: `what` names the rows and their order.
    fn page_of<T: ToSchema>(what: &str, hinted: bool) -> RefOr<Schema> {
        page_of_items(Ref::from_schema_name(T::name()).into(), what, hinted)
    }

    /// The name of the schema of a company list's rows.
    pub(super) const COMPANY_LIST_ITEM: &str = "V1CompanyListItem";

    /// The rows of a company page: `V1Company`'s properties, and on each
    /// result of a search its `match` (`V1SearchMatch`): the one property
    /// not every row carries.
    fn company_list_item() -> RefOr<Schema> {
        let RefOr::T(Schema::Object(mut row)) = Company::schema() else {
            unreachable!("V1Company is an object schema")
        };
        row.description = Some(
            "A company in a list: every `V1Company` field, and on each result of a search (`search` given), \
             and only then, `match`."
                .into(),
        );
        let with_match = utoipa::openapi::schema::AllOfBuilder::new()
            .item(Ref::from_schema_name(crate::SearchMatch::name()))
            .description(Some(
                "Present on each result of a search, and only then: the field the term matched and its value \
                 (a former ticker or name from the identity history, or the current one).",
            ));
        row.properties.insert("match".into(), with_match.into());
        RefOr::T(Schema::Object(row))
    }

    /// The schema of a page whose rows are `items`; `hinted`: a list with
    /// exact-match filters, whose empty page may carry `hint`.
    fn page_of_items(items: RefOr<Schema>, what: &str, hinted: bool) -> RefOr<Schema> {
        let nullable_string = ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null]));
        let page = ObjectBuilder::new()
            .description(Some(format!("One page of {what}.")))
            .property("data", ArrayBuilder::new().items(items).description(Some(format!("The {what}."))))
            .required("data")
            .property(
                "next_cursor",
                nullable_string.description(Some("Cursor of the next page: a string when `has_more`, else `null`.")),
            )
            .required("next_cursor")
            .property(
                "has_more",
                ObjectBuilder::new().schema_type(Type::Boolean).description(Some("Whether there is a next page.")),
            )
            .required("has_more");
        let page = if hinted {
            let hint = utoipa::openapi::schema::AllOfBuilder::new()
                .item(Ref::from_schema_name(Hint::name()))
                .description(Some(
                    "Only on an empty page whose exact-match filter (`industry`, `category`, `tag`) names a value \
                     that does not exist: that parameter and the nearest existing values.",
                ));
            page.property("hint", hint)
        } else {
            page
        };
        page.build().into()
    }

    /// `PartialSchema` and `ToSchema` of `Page<$item>`, named `$name`
    /// (`$hinted`: see [`page_of_items`]).
    macro_rules! page_schema {
        ($item:ty, $name:literal, $what:literal, $hinted:literal) => {
            impl PartialSchema for Page<$item> {
                fn schema() -> RefOr<Schema> {
                    page_of::<$item>($what, $hinted)
                }
            }

            impl ToSchema for Page<$item> {
                fn name() -> std::borrow::Cow<'static, str> {
                    $name.into()
                }
                fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
                    schemas.push((<$item>::name().into_owned(), <$item>::schema()));
                    if $hinted {
                        schemas.push((Hint::name().into_owned(), Hint::schema()));
                    }
                }
            }
        };
    }

    impl PartialSchema for Page<Company> {
        fn schema() -> RefOr<Schema> {
            page_of_items(
                Ref::from_schema_name(COMPANY_LIST_ITEM).into(),
                "companies, ordered by `ticker` then `isin`, or with `search` by relevance (`sort`)",
                true,
            )
        }
    }

    impl ToSchema for Page<Company> {
        fn name() -> std::borrow::Cow<'static, str> {
            "V1CompanyPage".into()
        }
        fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
            schemas.push((Company::name().into_owned(), Company::schema()));
            schemas.push((COMPANY_LIST_ITEM.into(), company_list_item()));
            schemas.push((crate::SearchMatch::name().into_owned(), crate::SearchMatch::schema()));
            <crate::SearchMatch as ToSchema>::schemas(schemas);
            schemas.push((Hint::name().into_owned(), Hint::schema()));
        }
    }
    page_schema!(
        ArticleSummary,
        "V1NewsPage",
        "articles without `body`, newest first (`published_at` descending, then `slug`; undated articles last, \
         by `slug`)",
        true
    );
    page_schema!(crate::event::Event, "V1EventPage", "events, oldest first (by `id`)", false);
    page_schema!(
        crate::actions::CorporateAction,
        "V1ActionPage",
        "corporate actions, `ex_date` ascending, then `id`",
        false
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(rows: &[serde_json::Value], next: Option<&str>, more: bool, hint: Option<&Hint>) -> Vec<u8> {
        let mut out = Vec::new();
        write_json(
            &mut out,
            |b| {
                for (i, r) in rows.iter().enumerate() {
                    if i > 0 {
                        b.push(b',');
                    }
                    serde_json::to_writer(&mut *b, r).unwrap();
                }
            },
            next,
            more,
            hint,
        );
        out
    }

    #[test]
    fn written_bytes_are_a_page() {
        let rows = vec![serde_json::json!({"a": 1}), serde_json::json!({"b": "x\"y"})];
        for (next, more) in [(Some("c\"ursor"), true), (None, false)] {
            let bytes = written(&rows, next, more, None);
            let page: Page<serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(page, Page::new(rows.clone(), next.map(str::to_owned), more));
            assert_eq!(bytes, serde_json::to_vec(&page).unwrap());
        }
        let empty: Page<serde_json::Value> = serde_json::from_slice(&written(&[], None, false, None)).unwrap();
        assert!(empty.data.is_empty());
        let hint = Hint { param: "tag".into(), nearest: vec!["a\"b".into()] };
        let bytes = written(&[], None, false, Some(&hint));
        let page: Page<serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(page.hint.as_ref(), Some(&hint));
        assert_eq!(bytes, serde_json::to_vec(&page).unwrap());
    }

    /// The schemas name the fields serde writes, all required.
    #[cfg(feature = "openapi")]
    #[test]
    fn schema_has_the_serde_fields() {
        use utoipa::PartialSchema;
        let page: Page<crate::Company> = Page::new(vec![], None, false);
        let v = serde_json::to_value(&page).unwrap();
        let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        keys.sort();
        let schema = serde_json::to_value(Page::<crate::event::Event>::schema()).unwrap();
        let mut props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        props.sort();
        assert_eq!(props, keys);
        assert_eq!(schema["required"].as_array().unwrap().len(), keys.len());
        // The lists with exact-match filters may also carry `hint`, not required.
        let with_hint = Page { hint: Some(Hint { param: "tag".into(), nearest: vec![] }), ..page };
        let v = serde_json::to_value(&with_hint).unwrap();
        let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        keys.sort();
        for schema in [Page::<crate::Company>::schema(), Page::<crate::ArticleSummary>::schema()] {
            let schema = serde_json::to_value(schema).unwrap();
            let mut props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
            props.sort();
            assert_eq!(props, keys);
            assert_eq!(schema["required"].as_array().unwrap().len(), keys.len() - 1);
        }
    }
}
