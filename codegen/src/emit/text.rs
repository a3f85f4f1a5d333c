//! Rust source written directly as text, laid out as `rustfmt` lays it out with its default
//! settings (style edition 2024): no token stream is built, parsed back with `syn` and printed
//! with `prettyplease` (which was most of what a file cost), and `cargo fmt --check` accepts
//! every generated file as it is.
//!
//! Only the shapes the text emitters write are covered, each with the width rule `rustfmt`
//! applies to it: a line is at most [`MAX_WIDTH`] columns; a call's arguments, a method chain
//! and an attribute's argument list have their own limits (`fn_call_width`, `chain_width`,
//! `attr_fn_like_width`); a type too long for its line breaks its generic arguments one per
//! line; a signature that does not fit breaks its parameters (and, if needed, its generics) one
//! per line; arrays and `use` lists follow their own width and sorting rules. The tests run
//! `rustfmt --check` over every generated file, names of any length included.

/// `rustfmt`'s `max_width`.
pub(crate) const MAX_WIDTH: usize = 100;
/// `rustfmt`'s `fn_call_width`: the widest argument list a call keeps on one line.
const FN_CALL_WIDTH: usize = 60;
/// `rustfmt`'s `chain_width`: the widest method chain kept on one line.
const CHAIN_WIDTH: usize = 60;
/// `rustfmt`'s `attr_fn_like_width`: the widest argument list an attribute keeps on one line.
const ATTR_FN_LIKE_WIDTH: usize = 70;
/// `rustfmt`'s `array_width`: the widest array kept on one line.
const ARRAY_WIDTH: usize = 60;
/// `rustfmt`'s `short_array_element_width_threshold`: arrays of items no wider than this fill
/// their lines instead of taking one line per item.
const SHORT_ARRAY_ELEMENT: usize = 10;
/// The widest `#[derive(…)]` line `rustfmt` keeps as one line.
const DERIVE_WIDTH: usize = 96;
/// One level of indentation.
const TAB: usize = 4;

/// A type, or anything laid out like one: a head (`::core::option::Option`,
/// `value: impl ::core::convert::Into`, `I: ::core::convert::Into`) and its generic arguments.
#[derive(Debug, Clone)]
pub(crate) struct Ty {
    head: String,
    args: Vec<Ty>,
    /// A tuple: `(args…)` (the head is empty).
    tuple: bool,
}

impl Ty {
    /// A type without generic arguments (or written whole: `(K, V)`, `Item = I`).
    pub(crate) fn new(head: impl Into<String>) -> Self {
        Ty {
            head: head.into(),
            args: Vec::new(),
            tuple: false,
        }
    }

    /// `head<args…>`.
    pub(crate) fn generic(head: impl Into<String>, args: Vec<Ty>) -> Self {
        Ty {
            head: head.into(),
            args,
            tuple: false,
        }
    }

    /// `(items…)`, broken one item per line like generic arguments.
    pub(crate) fn tuple(items: Vec<Ty>) -> Self {
        Ty {
            head: String::new(),
            args: items,
            tuple: true,
        }
    }

    fn delimiters(&self) -> (char, char) {
        if self.tuple { ('(', ')') } else { ('<', '>') }
    }

    /// The same type after `prefix` (`value: impl ::core::convert::Into` from
    /// `::core::convert::Into`).
    pub(crate) fn prefixed(mut self, prefix: &str) -> Self {
        self.head.insert_str(0, prefix);
        self
    }

    fn flat_into(&self, out: &mut String) {
        out.push_str(&self.head);
        let (open, close) = self.delimiters();
        if let Some((first, rest)) = self.args.split_first() {
            out.push(open);
            first.flat_into(out);
            for a in rest {
                out.push_str(", ");
                a.flat_into(out);
            }
            out.push(close);
        }
    }

    /// The type on one line.
    pub(crate) fn flat(&self) -> String {
        let mut s = String::new();
        self.flat_into(&mut s);
        s
    }

    /// Whether the type's own width limit lets it stay on one line: a tuple's items are a list
    /// like a call's arguments, at most 60 columns.
    fn list_fits(&self) -> bool {
        !self.tuple || self.flat().len() - 2 <= FN_CALL_WIDTH
    }

    /// Writes the type where the current line has reached column `col`, then `suffix`; when it
    /// does not fit, its arguments go one per line at `indent + 4` and `>` closes at `indent`.
    fn write(&self, out: &mut String, col: usize, indent: usize, suffix: &str) {
        let flat = self.flat();
        // rustfmt lets an `impl Trait<…>` parameter run up to five columns past the limit
        // before it breaks the trait's arguments.
        let limit = MAX_WIDTH + if self.head.contains("impl ") { 5 } else { 0 };
        if self.args.is_empty() || (self.list_fits() && col + flat.len() + suffix.len() <= limit) {
            out.push_str(&flat);
            out.push_str(suffix);
            return;
        }
        let (open, close) = self.delimiters();
        out.push_str(&self.head);
        out.push(open);
        out.push('\n');
        for a in &self.args {
            pad(out, indent + TAB);
            a.write(out, indent + TAB, indent + TAB, ",");
            out.push('\n');
        }
        pad(out, indent);
        out.push(close);
        out.push_str(suffix);
    }
}

/// Whether a line of `cols` columns is within the limit.
fn fits(cols: usize) -> bool {
    cols <= MAX_WIDTH
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A file (or part of one) being written.
///
/// Lines start at the current indent, which only scopes change: [`Src::block`] (`head {` …
/// `}`), [`Src::scope`] (any opening and closing line), [`Src::indented`], and the item
/// scopes built on them ([`Src::impl_for`], [`Src::func`], [`Src::method`],
/// [`Src::macro_args`]). A scope writes its closing line itself when its body returns, so an
/// emitter's nesting is the nesting of the code it writes, and no emitter names a column.
#[derive(Debug, Default)]
pub(crate) struct Src {
    out: String,
    /// The column lines start at: four per open scope.
    indent: usize,
    /// Inside a macro's arguments, where `rustfmt` ends a broken argument list without a
    /// trailing comma.
    in_macro: bool,
}

impl Src {
    /// An empty text.
    pub(crate) fn new() -> Self {
        Src {
            out: String::with_capacity(8 * 1024),
            indent: 0,
            in_macro: false,
        }
    }

    /// The text written.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    /// The column the next line starts at (for an emitter's own width decisions).
    pub(crate) fn col(&self) -> usize {
        self.indent
    }

    /// One line at the current indent; an empty one is a blank line (no trailing spaces).
    pub(crate) fn line(&mut self, text: &str) {
        self.line_at(self.indent, text);
    }

    /// A blank line.
    pub(crate) fn blank(&mut self) {
        self.out.push('\n');
    }

    fn line_at(&mut self, indent: usize, text: &str) {
        if !text.is_empty() {
            pad(&mut self.out, indent);
            self.out.push_str(text);
        }
        self.out.push('\n');
    }

    /// `body` one level in, with no line of its own before or after.
    pub(crate) fn indented(&mut self, body: impl FnOnce(&mut Src)) {
        self.indent += TAB;
        body(self);
        self.indent -= TAB;
    }

    /// `open`, `body` one level in, then `close`.
    pub(crate) fn scope(&mut self, open: &str, close: &str, body: impl FnOnce(&mut Src)) {
        self.line(open);
        self.indented(body);
        self.line(close);
    }

    /// `{head} {`, `body` one level in, then `}`: an item, an impl, a match, an arm, a struct
    /// literal. An empty head opens a bare block (`{`).
    pub(crate) fn block(&mut self, head: &str, body: impl FnOnce(&mut Src)) {
        self.block_then(head, "", body);
    }

    /// As [`Src::block`], with `tail` after the closing brace (`},`, `};`, `}];`).
    pub(crate) fn block_then(&mut self, head: &str, tail: &str, body: impl FnOnce(&mut Src)) {
        let open = if head.is_empty() {
            "{".to_string()
        } else {
            format!("{head} {{")
        };
        self.scope(&open, &format!("}}{tail}"), body);
    }

    /// `open` (which ends with a macro's opening delimiter, `assert!(`), the macro's arguments
    /// one level in, then `close`. Calls written inside end without a trailing comma when
    /// broken, as `rustfmt` writes them in a macro.
    pub(crate) fn macro_args(&mut self, open: &str, close: &str, body: impl FnOnce(&mut Src)) {
        let outer = std::mem::replace(&mut self.in_macro, true);
        self.scope(open, close, body);
        self.in_macro = outer;
    }

    /// `text` as `///` lines (a blank line as `///`).
    pub(crate) fn doc(&mut self, text: &str) {
        doc_comment(&mut self.out, self.indent, "///", text);
    }

    /// `#[name(items…)]`: on one line while the items take at most 70 columns and the line fits,
    /// else one item per line (no trailing comma: `rustfmt` writes none in attributes).
    pub(crate) fn attr_list(&mut self, name: &str, items: &[&str]) {
        let indent = self.indent;
        let inner = items.join(", ");
        // A single argument is only limited by the line.
        if (items.len() == 1 || inner.len() <= ATTR_FN_LIKE_WIDTH)
            && indent + name.len() + inner.len() + 5 <= MAX_WIDTH
        {
            self.line_at(indent, &format!("#[{name}({inner})]"));
            return;
        }
        self.line_at(indent, &format!("#[{name}("));
        for (i, item) in items.iter().enumerate() {
            let comma = if i + 1 < items.len() { "," } else { "" };
            self.line_at(indent + TAB, &format!("{item}{comma}"));
        }
        self.line_at(indent, ")]");
    }

    /// `#[derive(items…)]`: on one line when it fits, else the items on one line of their own,
    /// else one per line (with trailing commas).
    pub(crate) fn derive(&mut self, items: &[&str]) {
        let indent = self.indent;
        let inner = items.join(", ");
        if indent + inner.len() + "#[derive()]".len() <= DERIVE_WIDTH {
            self.line_at(indent, &format!("#[derive({inner})]"));
            return;
        }
        self.line_at(indent, "#[derive(");
        if fits(indent + TAB + inner.len() + 1) {
            self.line_at(indent + TAB, &format!("{inner},"));
        } else {
            for item in items {
                self.line_at(indent + TAB, &format!("{item},"));
            }
        }
        self.line_at(indent, ")]");
    }

    /// A struct field, `{vis_name}: {ty},`: on one line, else the type alone on the next line,
    /// else the type broken across lines.
    pub(crate) fn field(&mut self, vis_name: &str, ty: &Ty) {
        let indent = self.indent;
        let flat = ty.flat();
        let head = format!("{vis_name}:");
        if ty.list_fits() && fits(indent + head.len() + 1 + flat.len() + 1) {
            self.line_at(indent, &format!("{head} {flat},"));
        } else if ty.list_fits() && fits(indent + TAB + flat.len() + 1) {
            self.line_at(indent, &head);
            self.line_at(indent + TAB, &format!("{flat},"));
        } else {
            pad(&mut self.out, indent);
            self.out.push_str(&head);
            self.out.push(' ');
            ty.write(&mut self.out, indent + head.len() + 1, indent, ",");
            self.out.push('\n');
        }
    }

    /// A function: its signature, `{head}<generics>(params) -> ret {`, `body` one level in,
    /// then `}`. The signature is on one line when it fits; else the parameters go one per line,
    /// and the generics too when they do not fit on the first line.
    pub(crate) fn func(
        &mut self,
        head: &str,
        generics: &[Ty],
        params: &[Ty],
        ret: Option<&Ty>,
        body: impl FnOnce(&mut Src),
    ) {
        self.signature(self.indent, head, generics, params, ret, " {");
        self.indented(body);
        self.line("}");
    }

    /// A function's declaration (a trait method without a body): [`Src::func`]'s layout,
    /// ending with `;`.
    pub(crate) fn fn_decl(&mut self, head: &str, generics: &[Ty], params: &[Ty], ret: Option<&Ty>) {
        self.signature(self.indent, head, generics, params, ret, ";");
    }

    /// A signature ending with `end`: ` {` (a definition) or `;` (a declaration).
    fn signature(
        &mut self,
        indent: usize,
        head: &str,
        generics: &[Ty],
        params: &[Ty],
        ret: Option<&Ty>,
        end: &str,
    ) {
        let join = |tys: &[Ty]| tys.iter().map(Ty::flat).collect::<Vec<_>>().join(", ");
        let generics_flat = (!generics.is_empty()).then(|| format!("<{}>", join(generics)));
        let generics_flat = generics_flat.as_deref().unwrap_or("");
        let params_flat = join(params);
        let ret_flat = ret.map(|r| format!(" -> {}", r.flat())).unwrap_or_default();
        let one = format!("{head}{generics_flat}({params_flat}){ret_flat}{end}");
        if indent + one.len() <= MAX_WIDTH {
            self.line_at(indent, &one);
            return;
        }
        pad(&mut self.out, indent);
        self.out.push_str(head);
        if let (true, true, Some(r)) = (params.is_empty(), generics.is_empty(), ret) {
            // Nothing to break but the return type.
            self.out.push_str("() -> ");
            r.write(&mut self.out, indent + head.len() + 6, indent, end);
            self.out.push('\n');
            return;
        }
        if !generics.is_empty() {
            // rustfmt keeps the generics on the first line when `…>(` ends three columns
            // short of the limit.
            if fits(indent + head.len() + generics_flat.len() + "(".len() + 3) {
                self.out.push_str(generics_flat);
            } else {
                self.out.push_str("<\n");
                for g in generics {
                    pad(&mut self.out, indent + TAB);
                    // A bound's own arguments are indented one level more than the parameter.
                    g.write(&mut self.out, indent + TAB, indent + 2 * TAB, ",");
                    self.out.push('\n');
                }
                pad(&mut self.out, indent);
                self.out.push('>');
            }
        }
        self.out.push_str("(\n");
        for p in params {
            pad(&mut self.out, indent + TAB);
            p.write(&mut self.out, indent + TAB, indent + TAB, ",");
            self.out.push('\n');
        }
        pad(&mut self.out, indent);
        self.out.push(')');
        match ret {
            Some(r) => {
                self.out.push_str(" -> ");
                let flat = r.flat();
                if end != " {" {
                    r.write(&mut self.out, indent + 5, indent, end);
                } else if indent + 5 + flat.len() + 2 <= MAX_WIDTH - indent {
                    // (rustfmt counts the indent twice for this line.)
                    self.out.push_str(&flat);
                    self.out.push_str(" {");
                } else if indent + 5 + flat.len() <= MAX_WIDTH + 2 {
                    // The type fits without the brace (rustfmt allows it two columns past the
                    // limit here): the brace goes on a line of its own.
                    self.out.push_str(&flat);
                    self.out.push('\n');
                    pad(&mut self.out, indent);
                    self.out.push('{');
                } else {
                    r.write(&mut self.out, indent + 5, indent, end);
                }
            }
            None => self.out.push_str(end),
        }
        self.out.push('\n');
    }

    /// A method of an impl: its doc, `#[inline]`, then [`Src::func`].
    pub(crate) fn method(
        &mut self,
        doc: &str,
        head: &str,
        generics: &[Ty],
        params: &[Ty],
        ret: Option<&Ty>,
        body: impl FnOnce(&mut Src),
    ) {
        self.doc(doc);
        self.line("#[inline]");
        self.func(head, generics, params, ret, body);
    }

    /// `{lhs} = {rhs};`, the right-hand side on the next line when the statement does not fit.
    pub(crate) fn assign(&mut self, lhs: &str, rhs: &str) {
        let indent = self.indent;
        if indent + lhs.len() + rhs.len() + 4 <= MAX_WIDTH {
            self.line_at(indent, &format!("{lhs} = {rhs};"));
        } else {
            self.line_at(indent, &format!("{lhs} ="));
            self.line_at(indent + TAB, &format!("{rhs};"));
        }
    }

    /// `{lead}{callee}(args…){tail}`: on one line when the arguments take at most 60 columns
    /// (or there is one) and the line fits, else one argument per line, the last with a trailing
    /// comma unless the callee is a macro (`include_str!`) or the call is inside one
    /// ([`Src::macro_args`]): `rustfmt` writes none in a macro's arguments.
    pub(crate) fn call(&mut self, lead: &str, callee: &str, args: &[&str], tail: &str) {
        let indent = self.indent;
        let last_comma = if self.in_macro || callee.ends_with('!') {
            ""
        } else {
            ","
        };
        let inner = args.join(", ");
        // A single argument is only limited by the line.
        let inline = args.len() == 1 || inner.len() <= FN_CALL_WIDTH;
        let call = format!("{callee}({inner}){tail}");
        if inline && fits(indent + lead.len() + call.len()) {
            self.line_at(indent, &format!("{lead}{call}"));
            return;
        }
        // The right-hand side of `let x =` moves to the next line when it fits there whole (a
        // struct field's does not).
        if inline && lead.ends_with("= ") && fits(indent + TAB + call.len()) {
            self.line_at(indent, lead.trim_end());
            self.line_at(indent + TAB, &call);
            return;
        }
        self.line_at(indent, &format!("{lead}{callee}("));
        if args.len() > 1 && args.iter().all(|a| is_short_simple(a)) && last_comma == "," {
            // Short plain arguments fill lines (rustfmt's "mixed" layout).
            self.fill(indent + TAB, args, MAX_WIDTH, true);
        } else {
            for (i, a) in args.iter().enumerate() {
                let comma = if i + 1 < args.len() { "," } else { last_comma };
                self.line_at(indent + TAB, &format!("{a}{comma}"));
            }
        }
        self.line_at(indent, &format!("){tail}"));
    }

    /// A method chain `{root}{links…}{tail}`: on one line when it takes at most 60 columns and
    /// the line fits, else one link per line one level in (the first stays on the root's line
    /// when the root is no wider than an indent, as `self` is).
    pub(crate) fn chain(&mut self, root: &str, links: &[&str], tail: &str) {
        let indent = self.indent;
        let flat: String = std::iter::once(root).chain(links.iter().copied()).collect();
        // A single link is only limited by the line.
        if (links.len() <= 1 || flat.len() <= CHAIN_WIDTH)
            && indent + flat.len() + tail.len() <= MAX_WIDTH
        {
            self.line_at(indent, &format!("{flat}{tail}"));
            return;
        }
        let (first, rest) = match links.split_first() {
            Some((l, rest)) if root.len() <= TAB => (format!("{root}{l}"), rest),
            _ => (root.to_string(), links),
        };
        pad(&mut self.out, indent);
        self.out.push_str(&first);
        for (i, l) in rest.iter().enumerate() {
            self.out.push('\n');
            pad(&mut self.out, indent + TAB);
            self.out.push_str(l);
            if i + 1 == rest.len() {
                self.out.push_str(tail);
            }
        }
        if rest.is_empty() {
            self.out.push_str(tail);
        }
        self.out.push('\n');
    }

    /// `{lead}{callee}(` + a method chain as the only argument + `){tail}`: on one line when
    /// all fits the limits, else the chain on lines of its own.
    pub(crate) fn call_with_chain(
        &mut self,
        lead: &str,
        callee: &str,
        root: &str,
        links: &[&str],
        tail: &str,
    ) {
        let indent = self.indent;
        let flat: String = std::iter::once(root).chain(links.iter().copied()).collect();
        if flat.len() <= FN_CALL_WIDTH
            && (links.len() <= 1 || flat.len() <= CHAIN_WIDTH)
            && indent + lead.len() + callee.len() + flat.len() + 2 + tail.len() <= MAX_WIDTH
        {
            self.line_at(indent, &format!("{lead}{callee}({flat}){tail}"));
            return;
        }
        self.scope(&format!("{lead}{callee}("), &format!("){tail}"), |s| {
            s.chain(root, links, ",")
        });
    }

    /// `impl {tr} for {ty} {`, `body` one level in, then `}`; `for {ty}` and the brace go on
    /// lines of their own when the first line does not fit.
    pub(crate) fn impl_for(&mut self, tr: &str, ty: &str, body: impl FnOnce(&mut Src)) {
        let indent = self.indent;
        // `tr` may start with the impl's generics (`<T: Clone> Clone`).
        let tr = tr.trim_start();
        let sep = if tr.starts_with('<') { "" } else { " " };
        let one = format!("impl{sep}{tr} for {ty} {{");
        if indent + one.len() <= MAX_WIDTH {
            self.line_at(indent, &one);
        } else {
            self.line_at(indent, &format!("impl{sep}{tr}"));
            self.line_at(indent + TAB, &format!("for {ty}"));
            self.line_at(indent, "{");
        }
        self.indented(body);
        self.line("}");
    }
}

/// A name or a literal no wider than `short_array_element_width_threshold`: such arguments
/// share a line when a call's arguments are broken.
fn is_short_simple(arg: &str) -> bool {
    arg.len() <= SHORT_ARRAY_ELEMENT
        && (arg.chars().all(|c| c.is_alphanumeric() || c == '_')
            || arg.starts_with('"') && arg.ends_with('"') && !arg[1..arg.len() - 1].contains('"'))
}

/// One piece of a name as the style guide's version sorting sees it: an underscore, a run of
/// digits, or a run of anything else.
#[derive(Debug, PartialEq, Eq)]
enum Chunk<'a> {
    Underscore,
    Digits(&'a str),
    Other(&'a str),
}

fn chunks(s: &str) -> impl Iterator<Item = Chunk<'_>> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let (chunk, len) = if first == '_' {
            (Chunk::Underscore, 1)
        } else if first.is_ascii_digit() {
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            (Chunk::Digits(&rest[..len]), len)
        } else {
            let len = rest
                .find(|c: char| c == '_' || c.is_ascii_digit())
                .unwrap_or(rest.len());
            (Chunk::Other(&rest[..len]), len)
        };
        rest = &rest[len..];
        Some(chunk)
    })
}

/// The Rust style guide's "version sorting", which `rustfmt` (style edition 2024) applies to
/// imports: `v2` before `v10`, `_` before any other character.
pub(crate) fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut ca, mut cb) = (chunks(a), chunks(b));
    // Equal numbers written with different leading zeros: the first such pair decides, last.
    let mut zeros = Ordering::Equal;
    loop {
        let (x, y) = match (ca.next(), cb.next()) {
            (None, None) => return zeros,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => (x, y),
        };
        let order = match (&x, &y) {
            (Chunk::Underscore, Chunk::Underscore) => Ordering::Equal,
            (Chunk::Underscore, _) => Ordering::Less,
            (_, Chunk::Underscore) => Ordering::Greater,
            (Chunk::Digits(p), Chunk::Digits(q)) => {
                let (tp, tq) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                let by_value = tp.len().cmp(&tq.len()).then_with(|| tp.cmp(tq));
                if by_value == Ordering::Equal && zeros == Ordering::Equal {
                    // More leading zeros sorts first.
                    zeros = q.len().cmp(&p.len());
                }
                by_value
            }
            (Chunk::Digits(p) | Chunk::Other(p), Chunk::Digits(q) | Chunk::Other(q)) => p.cmp(q),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
}

impl Src {
    /// `{lead}{{items…}};` (a `use` with a list), the items sorted as `rustfmt` sorts them: one
    /// line when it fits, else the items filling lines of their own one level in. A single
    /// item is written without braces.
    pub(crate) fn use_list(&mut self, lead: &str, items: &[&str]) {
        let indent = self.indent;
        let mut items = items.to_vec();
        items.sort_by(|a, b| (*a != "self").cmp(&(*b != "self")).then(version_cmp(a, b)));
        if let [one] = items.as_slice() {
            self.line_at(indent, &format!("{lead}{one};"));
            return;
        }
        // rustfmt keeps a list on one line two columns short of the limit, and fills the lines
        // of a broken one up to one column short.
        let one = format!("{lead}{{{}}};", items.join(", "));
        if indent + one.len() < MAX_WIDTH - 1 {
            self.line_at(indent, &one);
            return;
        }
        self.line_at(indent, &format!("{lead}{{"));
        // rustfmt fills a broken list's lines up to one column short of the limit, not counting
        // the last item's comma.
        self.fill(indent + TAB, &items, MAX_WIDTH - 1, false);
        self.line_at(indent, "};");
    }

    /// `{lead}[items…]{tail}`, an array: on one line when the items take at most 60 columns
    /// (`array_width`; or there is one) and the line fits; else, when every item is at most 10 columns
    /// (`short_array_element_width_threshold`), the items filling lines; else one per line.
    pub(crate) fn array(&mut self, lead: &str, items: &[String], tail: &str) {
        let indent = self.indent;
        let inner = items.join(", ");
        // A single item is only limited by the line.
        if (items.len() == 1 || inner.len() <= ARRAY_WIDTH)
            && fits(indent + lead.len() + inner.len() + 2 + tail.len())
        {
            self.line_at(indent, &format!("{lead}[{inner}]{tail}"));
            return;
        }
        self.line_at(indent, &format!("{lead}["));
        if items.iter().all(|i| i.len() <= SHORT_ARRAY_ELEMENT) {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            self.fill(indent + TAB, &items, MAX_WIDTH, true);
        } else {
            for item in items {
                self.line_at(indent + TAB, &format!("{item},"));
            }
        }
        self.line_at(indent, &format!("]{tail}"));
    }

    /// `items` filling lines at `indent`, each item followed by a comma, a line holding as many
    /// as keep it within `limit` columns (`last_comma`: whether the last item's comma counts).
    fn fill(&mut self, indent: usize, items: &[&str], limit: usize, last_comma: bool) {
        let mut line = String::new();
        for (i, item) in items.iter().enumerate() {
            let comma = usize::from(last_comma || i + 1 < items.len());
            if !line.is_empty() && indent + line.len() + 1 + item.len() + comma > limit {
                self.line_at(indent, &line);
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(item);
            line.push(',');
        }
        self.line_at(indent, &line);
    }

    /// `pub use self::<module>::{items…};` for each `(module, items)`, in the order `rustfmt`
    /// keeps (modules version-sorted, a raw identifier by its name).
    pub(crate) fn reexports(&mut self, mut entries: Vec<(String, Vec<String>)>) {
        if entries.is_empty() {
            return;
        }
        let key = |m: &str| m.trim_start_matches("r#").to_string();
        entries.sort_by(|(a, _), (b, _)| version_cmp(&key(a), &key(b)));
        for (module, items) in &entries {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            self.use_list(&format!("pub use self::{module}::"), &items);
        }
    }
}

/// `text` as comment lines starting with `marker` (`///` or `//!`) at `indent`: an item's doc
/// here, a module's doc in the format stage.
pub(crate) fn doc_comment(out: &mut String, indent: usize, marker: &str, text: &str) {
    for l in text.lines() {
        out.extend(std::iter::repeat_n(' ', indent));
        out.push_str(marker);
        let l = l.trim_end();
        if !l.is_empty() {
            out.push(' ');
            out.push_str(l);
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_sorting_orders_numbers_by_value_and_underscores_first() {
        let mut names = vec![
            "v10", "v2", "v1beta1", "v1", "a_b", "ab", "Zed", "apple", "x86_64", "x86_128", "v01",
        ];
        names.sort_by(|a, b| version_cmp(a, b));
        assert_eq!(
            names,
            [
                "Zed", "a_b", "ab", "apple", "v01", "v1", "v1beta1", "v2", "v10", "x86_64",
                "x86_128"
            ]
        );
    }

    #[test]
    fn scopes_own_their_indent_and_close_themselves() {
        let mut src = Src::new();
        src.block("impl A", |s| {
            s.func(
                "fn f",
                &[],
                &[Ty::new("&self")],
                Some(&Ty::new("u8")),
                |s| {
                    s.block("match self.0", |s| s.line("_ => 1,"));
                },
            );
            s.blank();
            s.macro_args("assert!(", ");", |s| {
                s.call("", "f", &["a".repeat(40).as_str(), &"b".repeat(30)], ",");
                s.line("\"message\"");
            });
        });
        let (a, b) = ("a".repeat(40), "b".repeat(30));
        assert_eq!(
            src.finish(),
            format!(
                "impl A {{\n    fn f(&self) -> u8 {{\n        match self.0 {{\n            _ => 1,\n        \
                 }}\n    }}\n\n    assert!(\n        f(\n            {a},\n            {b}\n        ),\n        \
                 \"message\"\n    );\n}}\n"
            )
        );
    }

    #[test]
    fn a_use_list_is_sorted_and_fills_lines_when_too_long() {
        let mut src = Src::new();
        src.use_list("pub use self::a::", &["b", "A", "self"]);
        src.use_list("pub use self::c::", &["C"]);
        let long: Vec<String> = (0..5)
            .map(|i| format!("Item{i}{}", "x".repeat(20)))
            .collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        src.use_list("pub use self::d::", &long);
        let x = "x".repeat(20);
        assert_eq!(
            src.finish(),
            format!(
                "pub use self::a::{{self, A, b}};\npub use self::c::C;\npub use self::d::{{\n    \
                 Item0{x}, Item1{x}, Item2{x},\n    Item3{x}, Item4{x},\n}};\n"
            )
        );
    }

    #[test]
    fn a_let_moves_its_call_to_the_next_line_and_short_arguments_share_a_line() {
        let long = format!("crate::{}::new_client", "x".repeat(45));
        let mut src = Src::new();
        src.indent = 8;
        src.call("let (a, b) = ", &long, &["&resources", "seed"], "?;");
        src.indent = 12;
        src.call(
            "inner: ",
            &format!("{long}{}", "y".repeat(8)),
            &["client", "None"],
            ",",
        );
        assert_eq!(
            src.finish(),
            format!(
                "        let (a, b) =\n            {long}(&resources, seed)?;\n            inner: \
                 {long}{}(\n                client, None,\n            ),\n",
                "y".repeat(8)
            )
        );
    }

    #[test]
    fn a_tuple_type_breaks_past_the_list_width() {
        let mut src = Src::new();
        let tuple = Ty::tuple(vec![Ty::new("super::Clientset"), Ty::new("x".repeat(50))]);
        src.indent = 4;
        src.field("pub pair", &tuple);
        assert_eq!(
            src.finish(),
            format!(
                "    pub pair: (\n        super::Clientset,\n        {},\n    ),\n",
                "x".repeat(50)
            )
        );
    }

    #[test]
    fn a_type_too_long_for_its_line_breaks_its_arguments_one_per_line() {
        let mut src = Src::new();
        let long = Ty::generic(
            "::std::collections::BTreeMap",
            vec![
                Ty::new("::std::string::String"),
                Ty::new(format!("crate::pkg::apis::group::v1::{}", "A".repeat(40))),
            ],
        );
        src.indent = 4;
        src.field(
            "pub field",
            &Ty::generic("::core::option::Option", vec![long]),
        );
        let text = src.finish();
        assert_eq!(
            text,
            format!(
                "    pub field: ::core::option::Option<\n        ::std::collections::BTreeMap<\n            \
                 ::std::string::String,\n            crate::pkg::apis::group::v1::{},\n        >,\n    >,\n",
                "A".repeat(40)
            )
        );
        assert!(text.lines().all(|l| l.len() <= MAX_WIDTH));
    }

    #[test]
    fn a_signature_breaks_its_parameters_before_its_return_type() {
        let mut src = Src::new();
        let params = [Ty::new("&self"), Ty::new("name: &str")];
        src.indent = 4;
        src.func("pub fn get", &[], &params, Some(&Ty::new("Self")), |_| {});
        assert_eq!(
            src.finish(),
            "    pub fn get(&self, name: &str) -> Self {\n    }\n"
        );

        let mut src = Src::new();
        let ret = Ty::generic(
            "::core::result::Result",
            vec![Ty::new("A".repeat(50)), Ty::new("B".repeat(40))],
        );
        src.func("pub fn extract", &[], &params, Some(&ret), |_| {});
        assert_eq!(
            src.finish(),
            format!(
                "pub fn extract(\n    &self,\n    name: &str,\n) -> ::core::result::Result<\n    {},\n    {},\n> {{\n}}\n",
                "A".repeat(50),
                "B".repeat(40)
            )
        );
    }

    #[test]
    fn attributes_and_calls_break_past_their_own_width_limits() {
        let mut src = Src::new();
        src.indent = 4;
        src.attr_list("serde", &["rename = \"a\"", "default"]);
        src.attr_list(
            "serde",
            &[
                "rename = \"apiVersion\"",
                "default",
                "skip_serializing_if = \"Option::is_none\"",
            ],
        );
        src.indent = 8;
        src.call("", "f", &["a", "b"], ";");
        src.call("", "f", &[&"x".repeat(40), &"y".repeat(20)], ";");
        let x = "x".repeat(40);
        let y = "y".repeat(20);
        assert_eq!(
            src.finish(),
            format!(
                "    #[serde(rename = \"a\", default)]\n    #[serde(\n        rename = \"apiVersion\",\n        \
                 default,\n        skip_serializing_if = \"Option::is_none\"\n    )]\n        f(a, b);\n        \
                 f(\n            {x},\n            {y},\n        );\n"
            )
        );
    }
}
