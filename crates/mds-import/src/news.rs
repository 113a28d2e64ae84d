//! The news import file (`mds import news FILE`): JSON Lines of `Article`
//! objects, one per line.
//!
//! Unknown fields are refused so a misspelt field surfaces instead of being
//! dropped. Optional text that is empty or white space becomes `null`, so an
//! article has one shape whichever way its source wrote "nothing".

use std::io::BufRead;

use mds_domain::bounds;
use mds_domain::time::parse_rfc3339;
use mds_domain::{Article, Slug};
use serde::Deserialize;

use crate::error::{ImportError, RowError};
use crate::fields::{non_empty, parse_isin, parse_ticker, parse_url};
use crate::format::{Format, Given, Input, ONE_FILE, Read, Refusal};
use crate::text::{self, FirstSeen};

/// An article as written in the file, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an article object")]
struct JsonArticle {
    slug: String,
    headline: String,
    subheadline: Option<String>,
    excerpt: Option<String>,
    body: Option<String>,
    category: Option<String>,
    tags: Option<Vec<String>>,
    isin: Option<String>,
    ticker: Option<String>,
    company_name: Option<String>,
    author_name: Option<String>,
    hero_image: Option<String>,
    url: Option<String>,
    published_at: Option<String>,
    updated_at: Option<String>,
}

/// Parses a news file: JSON Lines of articles, blank lines skipped.
///
/// Every bad line is reported; a file with any bad line yields no articles.
/// A slug appearing twice is an error on the later line, naming the earlier.
/// The articles come back in file order.
pub fn parse_articles(bytes: &[u8]) -> Result<Vec<Article>, ImportError> {
    let mut articles = Vec::new();
    for chunk in articles_in_chunks(bytes, usize::MAX) {
        articles.extend(chunk?);
    }
    Ok(articles)
}

/// The articles of a news file read from `reader` one line at a time, by
/// the rules of [`parse_articles`], handed out `chunk` at a time in file
/// order: an import holds one chunk and the slugs seen, never the file.
///
/// While every line so far is good, each item is `Ok` with the next chunk.
/// At the first bad line the reader goes on to the end, gathering every
/// problem, and the one item after that is the `Err` with all of them (an
/// import that has written the chunks before it then rolls back). A file
/// with no article in it is an `Err` too. Nothing follows an `Err`.
pub fn articles_in_chunks<R: BufRead>(reader: R, chunk: usize) -> ArticleChunks<R> {
    ArticleChunks {
        reader,
        chunk: chunk.max(1),
        line: 0,
        buf: Vec::new(),
        seen: FirstSeen::new(),
        lines_with_text: 0,
        errors: Vec::new(),
        done: false,
    }
}

/// The iterator of [`articles_in_chunks`].
pub struct ArticleChunks<R> {
    reader: R,
    chunk: usize,
    /// The last line read (1-based).
    line: usize,
    buf: Vec<u8>,
    seen: FirstSeen<Slug>,
    lines_with_text: usize,
    errors: Vec<RowError>,
    done: bool,
}

impl<R: BufRead> ArticleChunks<R> {
    /// The next non-blank line's article, its problems recorded; `None` at
    /// the end of the file.
    fn next_line(&mut self) -> Option<Option<Article>> {
        loop {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    self.errors.push(RowError::new(self.line + 1, format!("cannot be read: {e}")));
                    return None;
                }
            }
            self.line += 1;
            let mut bytes = self.buf.as_slice();
            if self.line == 1 {
                bytes = bytes.strip_prefix(text::BOM).unwrap_or(bytes);
            }
            let line = match std::str::from_utf8(bytes) {
                Ok(line) => line.trim(),
                Err(e) => {
                    self.lines_with_text += 1;
                    self.errors.push(text::not_utf8(self.line, bytes, &e));
                    return Some(None);
                }
            };
            if line.is_empty() {
                continue;
            }
            self.lines_with_text += 1;
            return Some(match text::json_object::<JsonArticle>(self.line, line) {
                Ok(row) => validate(self.line, row, &mut self.seen, &mut self.errors),
                Err(e) => {
                    self.errors.push(e);
                    None
                }
            });
        }
    }
}

impl<R: BufRead> Iterator for ArticleChunks<R> {
    type Item = Result<Vec<Article>, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut batch = Vec::new();
        while batch.len() < self.chunk && self.errors.is_empty() {
            match self.next_line() {
                Some(article) => batch.extend(article),
                None => break,
            }
        }
        if self.errors.is_empty() && !batch.is_empty() {
            return Some(Ok(batch));
        }
        // The end of the file, or a bad line: read on for every problem.
        while self.next_line().is_some() {}
        self.done = true;
        if self.lines_with_text == 0 {
            return Some(Err(ImportError::file("the file is empty")));
        }
        ImportError::check(std::mem::take(&mut self.errors)).err().map(Err)
    }
}

/// Checks every field of one article, reporting each bad one. A slug seen on
/// an earlier line is reported even when either article has other problems.
fn validate(line: usize, a: JsonArticle, seen: &mut FirstSeen<Slug>, errors: &mut Vec<RowError>) -> Option<Article> {
    let before = errors.len();
    let mut bad = |message: String| errors.push(RowError::new(line, message));
    let slug = match Slug::parse(&a.slug) {
        Err(e) => Err(format!("slug {:?}: {e}", a.slug)),
        Ok(slug) => match seen.insert(slug.clone(), line) {
            Some(first) => Err(format!("duplicate slug {slug}: it is already on line {first}")),
            None => Ok(slug),
        },
    };
    let slug = slug.map_err(&mut bad).ok();
    let headline = a.headline.trim();
    if headline.is_empty() {
        bad("headline is empty".to_owned());
    }
    for (value, bound) in [
        (Some(headline), bounds::HEADLINE),
        (a.subheadline.as_deref(), bounds::SUBHEADLINE),
        (a.excerpt.as_deref(), bounds::EXCERPT),
        (a.body.as_deref(), bounds::BODY),
        (a.category.as_deref(), bounds::CATEGORY),
        (a.company_name.as_deref(), bounds::ARTICLE_COMPANY_NAME),
        (a.author_name.as_deref(), bounds::AUTHOR_NAME),
    ] {
        if let Some(e) = non_empty(value).and_then(|v| bound.check(v).err()) {
            bad(e);
        }
    }
    let given = a.tags.unwrap_or_default();
    if given.len() > bounds::MAX_TAGS {
        bad(format!("{} tags; at most {} are allowed", given.len(), bounds::MAX_TAGS));
    }
    let mut tags = Vec::new();
    for (i, tag) in given.iter().enumerate() {
        match tag.trim() {
            "" => bad(format!("tags[{i}] is empty")),
            t => match bounds::TAG.check(t) {
                Ok(()) => tags.push(t.to_owned()),
                Err(e) => bad(format!("tags[{i}]: {e}")),
            },
        }
    }
    let isin = non_empty(a.isin.as_deref()).map(parse_isin).transpose().map_err(&mut bad).ok().flatten();
    let ticker = non_empty(a.ticker.as_deref()).map(parse_ticker).transpose().map_err(&mut bad).ok().flatten();
    let mut url = |field: &str, value: Option<&str>| {
        non_empty(value).map(|v| parse_url(field, v)).transpose().map_err(&mut bad).ok().flatten()
    };
    let hero_image = url("hero_image", a.hero_image.as_deref());
    let article_url = url("url", a.url.as_deref());
    let mut instant = |field: &str, value: Option<&str>| {
        non_empty(value)
            .map(|v| {
                parse_rfc3339(v)
                    .map_err(|e| format!("{field} must be an RFC 3339 date-time with an offset ({e}): {v:?}"))
            })
            .transpose()
            .map_err(&mut bad)
            .ok()
            .flatten()
    };
    let published_at = instant("published_at", a.published_at.as_deref());
    let updated_at = instant("updated_at", a.updated_at.as_deref());
    if let (Some(p), Some(u)) = (published_at, updated_at) {
        if u < p {
            bad("updated_at is before published_at".to_owned());
        }
    }
    if errors.len() > before {
        return None;
    }
    let text = |v: Option<String>| non_empty(v.as_deref()).map(str::to_owned);
    Some(Article {
        slug: slug?,
        headline: headline.to_owned(),
        subheadline: text(a.subheadline),
        excerpt: text(a.excerpt),
        body: text(a.body),
        category: text(a.category),
        tags,
        isin,
        ticker: ticker.map(|t| t.as_str().to_owned()),
        company_name: text(a.company_name),
        author_name: text(a.author_name),
        hero_image,
        url: article_url,
        published_at,
        updated_at,
    })
}

/// `mds import news FILE`: JSON Lines of articles, read a chunk at a time
/// as they are upserted by slug.
pub const FORMAT: Format =
    Format { name: "news", about: "News: JSON Lines of articles; upsert by slug.", args: ONE_FILE, read: read_format };

/// [`FORMAT`]'s reading: the file opened; its lines are read as the node
/// writes them ([`articles_in_chunks`]).
fn read_format(given: &Given, _today: chrono::NaiveDate) -> Result<Read, Refusal> {
    let file = given.the_file()?;
    let reader = file.reader()?;
    Ok(Input::Articles { file, reader }.into())
}
