// PII stripping for analytics text: a port of the Python package's
// toolcall_spec.analytics.pii, pass for pass and pattern for pattern, so that both give the same
// output for every input (tests/typescript/test_typescript_pii_differential.py compares them on
// generated messages). Read the Python module for why each rule is what it is; the comments here
// only say where JavaScript needs something Python does not.
//
// What differs between the two languages and is handled here:
// - Python's `\w`, `\s` and `[^\W\d_]` are Unicode classes; JavaScript's are ASCII. They are
//   written out as ranges of Python's Unicode data (unicode.js, made by scripts/unicode_classes.py;
//   node's `\p{L}` follows a newer Unicode), `\s` as the set str.isspace() has.
// - Python counts code points, JavaScript UTF-16 units: every place that looks at "the character
//   before" or cuts at a length reads whole code points.
// - Python's `match(text, pos)` is a sticky regular expression (`y`) here, `lastindex` the one
//   capturing group that took part.
// - `ipaddress.IPv6Address` is ported (CPython 3.11's parser): the same strings parse.

import { ALNUM, LETTER, WORD } from "./unicode.js";

export const EMAIL_TOKEN = "[EMAIL_REDACTED]";
export const CARD_TOKEN = "[CC_REDACTED]";
export const SSN_TOKEN = "[SSN_REDACTED]";
export const PHONE_TOKEN = "[PHONE_REDACTED]";
export const IBAN_TOKEN = "[IBAN_REDACTED]";
export const IP_TOKEN = "[IP_REDACTED]";
export const SECRET_TOKEN = "[SECRET_REDACTED]";
export const TOKENS = Object.freeze([EMAIL_TOKEN, CARD_TOKEN, SSN_TOKEN, PHONE_TOKEN, IBAN_TOKEN, IP_TOKEN, SECRET_TOKEN]);
export const MAX_DEPTH = 64;
export const DEPTH_TOKEN = "[TOO_DEEP]";

// Python's classes, for use inside [...] with the `u` flag: \w, [^\W\d_] and [^\W_] as ranges of
// the Unicode version of the Python the file was made with (unicode.js), not node's own \p{L}.
const W = WORD;
const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"; // str.isspace()

const re = (source, flags = "") => new RegExp(source, `u${flags}`);
const WORD_CHAR = re(`^[${W}]$`);
const LETTER_CHAR = re(`^[${LETTER}]$`);
const ALNUM_CHAR = re(`^[${ALNUM}]$`);
const SPACE_CHAR = re(`^[${SPACE}]$`);

/** The code point (as a string) that ends just before UTF-16 index `index`, or "". */
function charBefore(text, index) {
  if (index <= 0) return "";
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(index - 2, index);
  }
  return text[index - 1];
}

/** The code point (as a string) that starts at UTF-16 index `index`, or "". */
function charAt(text, index) {
  if (index >= text.length) return "";
  const point = text.codePointAt(index);
  return String.fromCodePoint(point);
}

/** Each match of a global or sticky `pattern` in `text` from `from`, as RegExp exec gives it. */
function* matchesOf(pattern, text, from = 0) {
  pattern.lastIndex = from;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    yield match;
    if (match[0].length === 0) pattern.lastIndex += 1;
  }
}

/** Python's `pattern.match(text, pos)`: a sticky pattern run at `pos`. */
function matchAt(sticky, text, pos) {
  sticky.lastIndex = pos;
  return sticky.exec(text);
}

/** Python's `str.strip()`: the whitespace str.isspace() knows, at both ends. */
export function pythonStrip(text) {
  return text.replace(STRIP_START, "").replace(STRIP_END, "");
}
export function pythonRstrip(text) {
  return text.replace(STRIP_END, "");
}
const STRIP_START = re(`^[${SPACE}]+`);
const STRIP_END = re(`[${SPACE}]+$`);

/** `text` with every e-mail, IBAN, IP address, phone, card number, SSN and ITIN replaced by its
 * token. Linear in the length of `text`. */
export function stripPii(text) {
  for (const redact of PASSES) text = redact(text);
  return text;
}

/** A copy of a JSON value with stripPii applied to every string, keys included, and to every
 * integer written out (one that is a card, phone number or SSN becomes its token). */
export function stripPiiDeep(value, depth = 0) {
  if (typeof value === "string") return stripPii(value);
  if (typeof value === "number" && Number.isInteger(value)) return stripInteger(value);
  if (depth >= MAX_DEPTH && value !== null && typeof value === "object") return DEPTH_TOKEN;
  if (Array.isArray(value)) return value.map((item) => stripPiiDeep(item, depth + 1));
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [key, item] of Object.entries(value)) out[stripPii(String(key))] = stripPiiDeep(item, depth + 1);
    return out;
  }
  return value;
}

const SHORTEST_NUMERIC_PII = 9;

function stripInteger(value) {
  const digits = BigInt(value).toString();
  if (digits.replace(/^-+/, "").length < SHORTEST_NUMERIC_PII) return value;
  const stripped = stripPii(digits);
  return stripped === digits ? value : stripped;
}

// --- safe cut -------------------------------------------------------------------------------------

const WORD_LOOKAHEAD = 512;
const TRAILING_WORD = re(`[^${SPACE}]+$`);
const LEADING_WORD = re(`[^${SPACE}]+`, "y");
const MAY_BE_PII = re(`[0-9"'@:]|eyJ|[spr]k[-_]|gh[pousr]_|AKIA|ASIA`);
const MAY_SPAN_A_SPACE = re(`[0-9"]|^(?:[Bb]earer|[Bb]asic|BEARER|BASIC|[-/])$`);

/** The UTF-16 index of code point number `count` of `text` (its length when it has fewer). */
function codePointOffset(text, count) {
  let index = 0;
  for (let seen = 0; seen < count && index < text.length; seen += 1) {
    const point = text.codePointAt(index);
    index += point > 0xffff ? 2 : 1;
  }
  return index;
}

/** The first `count` code points of `text`. */
export function cutCodePoints(text, count) {
  return text.slice(0, codePointOffset(text, count));
}

/** `text` cut to at most `limit` characters (code points) without leaving part of an address,
 * number or secret behind (the Python package's `safe_cut`). */
export function safeCut(text, limit) {
  const cut = codePointOffset(text, limit);
  if (cut >= text.length) return text;
  let head = text.slice(0, cut);
  if (!SPACE_CHAR.test(charAt(text, cut))) {
    const fragment = TRAILING_WORD.exec(head);
    const ahead = text.slice(cut, codePointOffset(text.slice(cut), WORD_LOOKAHEAD) + cut);
    const rest = matchAt(LEADING_WORD, ahead, 0);
    const fragmentTail = fragment ? Array.from(fragment[0]).slice(-WORD_LOOKAHEAD).join("") : "";
    const word = fragmentTail + (rest ? rest[0] : "");
    if (fragment !== null && MAY_BE_PII.test(word)) head = head.slice(0, fragment.index);
  }
  for (;;) {
    const trimmed = pythonRstrip(head);
    const before = TRAILING_WORD.exec(trimmed);
    if (before === null || !MAY_SPAN_A_SPACE.test(before[0])) return trimmed;
    head = trimmed.slice(0, before.index);
  }
}

// --- helpers --------------------------------------------------------------------------------------

/** Replace each span (sorted by start) by `token`; overlapping or touching spans become one. */
function replaceSpans(text, spans, token) {
  const out = [];
  let cursor = 0;
  let current = null;
  for (const [start, end] of spans) {
    if (current !== null && start <= current[1]) {
      current = [current[0], Math.max(current[1], end)];
      continue;
    }
    if (current !== null) {
      out.push(text.slice(cursor, current[0]), token);
      cursor = current[1];
    }
    current = [start, end];
  }
  if (current === null) return text;
  out.push(text.slice(cursor, current[0]), token, text.slice(current[1]));
  return out.join("");
}

const bySpan = (a, b) => a[0] - b[0] || a[1] - b[1];

// --- secrets --------------------------------------------------------------------------------------

const SECRETS = [
  re(String.raw`eyJ[${W}-]{6,}\.[${W}-]{6,}\.[${W}-]*`, "g"),
  re(String.raw`A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[A-Z0-9]{16}(?![A-Za-z0-9])`, "g"),
  re(String.raw`[spr]k(?:-(?:[a-z]+-)?[A-Za-z0-9_\-]{16,}|_(?:live|test)_[A-Za-z0-9]{10,})`, "g"),
  re(String.raw`gh(?:[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,})`, "g"),
  re(String.raw`glpat-[A-Za-z0-9_\-]{20,}`, "g"),
  re(String.raw`xox[abprs]-[A-Za-z0-9\-]{10,}`, "g"),
  re(String.raw`AIza[A-Za-z0-9_\-]{35}`, "g"),
  re(String.raw`(?<=[Bb]earer )[${W}\-.~+\/]+=*|(?<=BEARER )[${W}\-.~+\/]+=*`, "g"),
  re(String.raw`(?<=[Bb]asic )[A-Za-z0-9+\/]{8,}=*|(?<=BASIC )[A-Za-z0-9+\/]{8,}=*`, "g"),
];
const URL_USERINFO = re(String.raw`(?<=:\/\/)(?=[^${SPACE}\/?#@\[\]]{1,256}@)[^${SPACE}\/?#@\[\]:]*:[^${SPACE}\/?#@\[\]]*@`, "g");
// A host with a dot and its port, then no letter or digit: no user:password (`_userinfo`).
const HOST_AND_PORT = /^[^:.]*\.[^:]*:[0-9]{1,5}(?![0-9A-Za-z])/;
const userinfo = (match, offset, text) =>
  HOST_AND_PORT.test(match) && (domainLength(text, offset + match.length) || text.startsWith("[", offset + match.length))
    ? match
    : `${SECRET_TOKEN}@`;
const URL_FAMILY = SECRETS.length;
const SECRET_MARKERS = re(
  String.raw`J(?<=eyJ)()|A(?:(?=KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)()|(?=Iza)())|k(?<=[spr]k)(?=[-_])()` +
    String.raw`|g(?:(?=h[pousr]_|ithub_pat_)()|(?=lpat-)())|x(?=ox[abprs]-)()` +
    String.raw`|B(?:(?=earer )()|(?=EARER )()|(?=asic )()|(?=ASIC )())|b(?:(?=earer )()|(?=asic )())` +
    String.raw`|:(?=\/\/)()`,
  "g",
);
const MARKED_FAMILY = [-1, 0, 1, 6, 2, 3, 4, 5, 7, 7, 8, 8, 7, 8, URL_FAMILY];
const GLUE = re(`^[${W}-]$`);
const NUMERIC = /^\p{N}$/u;
/** Python's `str.isalpha()` for one code point: a letter of Python's data, no numeric. */
const isAlpha = (char) => char !== "" && LETTER_CHAR.test(char) && !NUMERIC.test(char);

function redactSecrets(text) {
  const families = new Set();
  for (const marker of matchesOf(SECRET_MARKERS, text)) {
    const group = marker.findLastIndex((value, index) => index > 0 && value !== undefined);
    families.add(MARKED_FAMILY[group > 0 ? group : 0]);
  }
  for (const family of [...families].sort((a, b) => a - b)) {
    if (family === URL_FAMILY) text = text.replace(URL_USERINFO, userinfo);
    else text = text.replace(SECRETS[family], secret);
  }
  return text;
}

function secret(match, ...rest) {
  const string = rest[rest.length - 1];
  const start = rest[rest.length - 2];
  const last = charBefore(string, start);
  const first = charBefore(string, start - last.length);
  // Glued: a letter, digit or underscore before it, or a dash after a letter (a word's dash,
  // not a number's: `0000-sk-...` kept the key).
  const glued = GLUE.test(last) && (last !== "-" || isAlpha(first)) && !string.startsWith("eyJ", start);
  return glued ? match : SECRET_TOKEN;
}

// --- e-mail ---------------------------------------------------------------------------------------

const DOMAIN_RUN = re(`[${W}.\\-]*`, "y");
const LETTER_LABEL = re(`\\.[${LETTER}]{2}`, "g");
const LOCAL_CHARACTERS = `${W}.!#$%&'*+\\-/=?^\`{|}~`;
const LOCAL_CHAR = re(`^[${LOCAL_CHARACTERS}]$`);

// Not String#includes or #indexOf: on a string built of many pieces V8 may scan it without
// flattening it (the 512 KB adversarial inputs took 0.1 to 3 s instead of milliseconds).
const APOSTROPHE = /'/;

function emailSpans(text) {
  const spans = [];
  const quoted = APOSTROPHE.test(text); // a regular expression: it flattens the string first
  let at = text.indexOf("@");
  while (at >= 0) {
    let start = afterScheme(text, localStart(text, at), at);
    if (quoted) start = afterOpeningQuote(text, start, at);
    const local = text.slice(start, at);
    const quote = local.length - local.replace(/^'+/, "").length;
    if (local.length > quote) {
      const end = domainLength(text, at + 1);
      if (end) spans.push([start + quote, at + 1 + end]);
    }
    at = text.indexOf("@", at + 1);
  }
  return spans;
}

/** Where the run of local-part characters that ends at `at` starts, read backwards a code point
 * at a time (a run stops at the "@" before it: every character is read once overall). */
function localStart(text, at) {
  let start = at;
  for (;;) {
    const code = start > 0 ? text.charCodeAt(start - 1) : -1;
    if (code >= 0 && code < 128) {
      // ASCII, most text: a table, not the regular expression (a call per character).
      if (!LOCAL_ASCII[code]) return start;
      start -= 1;
      continue;
    }
    const char = charBefore(text, start);
    if (char === "" || !LOCAL_CHAR.test(char)) return start;
    start -= char.length;
  }
}
const LOCAL_ASCII = Uint8Array.from({ length: 128 }, (_, code) => (LOCAL_CHAR.test(String.fromCharCode(code)) ? 1 : 0));

/** Where the local part from `start` to `at` starts when the run begins with a URL's `//`: after
 * it, and after the host when a path follows. */
function afterScheme(text, start, at) {
  if (start === 0 || text[start - 1] !== ":" || !text.startsWith("//", start)) return start;
  const slash = text.slice(start + 2, Math.max(at, start + 2)).indexOf("/");
  return slash < 0 ? start + 2 : start + 2 + slash + 1;
}

function afterOpeningQuote(text, start, at) {
  let quote = text.lastIndexOf("'", at - 1);
  while (quote >= start) {
    if (quote === start || !WORD_CHAR.test(charBefore(text, quote))) return quote + 1;
    quote = quote === 0 ? -1 : text.lastIndexOf("'", quote - 1);
  }
  return start;
}

const EMAIL_SPECIAL = re(
  String.raw`(?:"(?:[^"\\\r\n]|\\[^\r\n]){1,64}"|[${LOCAL_CHARACTERS}]{1,64})@` +
    String.raw`(\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\])?`,
  "g",
);

function specialEmailSpans(text) {
  if (!text.includes('"@') && !text.includes("@[")) return [];
  const spans = [];
  for (const match of matchesOf(EMAIL_SPECIAL, text)) {
    const start = match.index;
    const end = start + match[0].length;
    if (match[1]) spans.push([afterScheme(text, start, end), end]);
    else if (match[0].startsWith('"')) {
      const length = domainLength(text, end);
      if (length) spans.push([start, end + length]);
    }
  }
  return spans;
}

function domainLength(text, at) {
  const run = matchAt(DOMAIN_RUN, text, at);
  let domain = run !== null ? run[0].split("_")[0] : "";
  if (domain === "" || domain[0] === "." || domain[0] === "-") return 0;
  domain = domain.replace(/[.-]+$/, "");
  LETTER_LABEL.lastIndex = 1;
  return LETTER_LABEL.exec(domain) !== null ? domain.length : 0;
}

function redactEmails(text) {
  if (!text.includes("@")) return text;
  const spans = [...emailSpans(text), ...specialEmailSpans(text)].sort(bySpan);
  return replaceSpans(text, widenIntoNumbers(text, spans, digitPasses), EMAIL_TOKEN);
}

// The digit groups and separators right before a local part (an IBAN's groups hold letters too),
// and the digit groups and separators right after a domain: a number an address was read into.
const CHAIN_BEFORE = /[0-9A-Za-z \-./()+\u00a0\u2007\u202f]*/y;
const CHAIN_AFTER = /[0-9 \-./()\u00a0\u2007\u202f]*/y;
const GROUP = /[0-9A-Za-z]*/y;
// A local part's first groups, split as a number's are.
const GROUPS = /[0-9A-Za-z]+(?:[-./][0-9A-Za-z]+)*/y;
const NUMBER_REACH = 64; // longer than any number a pass reads with its separators
const ANY_DIGIT = /[0-9]/;

/** Each address span widened over a number it starts (ends) inside (`widen_into_numbers`). */
export function widenIntoNumbers(text, spans, read) {
  return spans.map(([start, end]) => [numberBefore(text, start, read), numberAfter(text, end, read)]);
}

function reversed(text) {
  return Array.from(text).reverse().join("");
}

function numberBefore(text, start, read) {
  const found = matchAt(GROUPS, text.slice(start, start + NUMBER_REACH), 0);
  const group = found === null ? "" : found[0];
  const chain = matchAt(CHAIN_BEFORE, reversed(text.slice(Math.max(0, start - NUMBER_REACH), start)), 0)[0];
  if (!group || !ANY_DIGIT.test(chain)) return start;
  const stripped = read(reversed(chain) + group);
  const first = stripped.indexOf("[");
  const tail = stripped.slice(stripped.lastIndexOf("]") + 1);
  if (first < 0 || tail.length >= group.length) return start; // the local part's group was not read
  return start - chain.length + first;
}

function numberAfter(text, end, read) {
  const group = reversed(matchAt(GROUP, reversed(text.slice(Math.max(0, end - NUMBER_REACH), end)), 0)[0]);
  const chain = matchAt(CHAIN_AFTER, text.slice(end, end + NUMBER_REACH), 0)[0];
  if (!group || !ANY_DIGIT.test(chain)) return end;
  const candidate = group + chain;
  const stripped = read(candidate);
  const first = stripped.indexOf("[");
  const tail = stripped.slice(stripped.lastIndexOf("]") + 1);
  if (first < 0 || first >= group.length) return end; // the domain's group was not read
  return end + candidate.length - group.length - tail.length;
}

// --- IBAN -----------------------------------------------------------------------------------------

const IBAN = /[0-9][0-9](?<=(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2})((?:[ \-]?[A-Za-z0-9]){11,30})/y;
const IBAN_COUNTRIES = new Set(
  ("AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI GL GR GT HN HR HU IE " +
    "IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO OM PK PL PS PT QA RO RS RU SA SC SD " +
    "SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE").split(" "),
);

function ibanSpans(text, starts) {
  const spans = [];
  for (const start of starts) {
    const match = matchAt(IBAN, text, start);
    const end = match !== null ? ibanEnd(text, match) : null;
    if (end !== null) spans.push([start - 2, end]);
  }
  return spans;
}

/** `digits` (an IBAN rearranged, letters as two digits each) modulo 97, computed piecewise. */
function mod97(rearranged) {
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder;
}

const isUpperAscii = (text) => /[A-Z]/.test(text) && !/[a-z]/.test(text);

function ibanEnd(text, match) {
  const matchStart = match.index;
  let prefix = text.slice(matchStart - 2, matchStart + 2);
  const body = match[1].toUpperCase();
  if (!isUpperAscii(prefix.slice(0, 2))) {
    prefix = prefix.toUpperCase();
    if (!IBAN_COUNTRIES.has(prefix.slice(0, 2))) return null;
  }
  const matchEnd = matchStart + match[0].length;
  const after = charAt(text, matchEnd);
  const ends = after === "" || !ALNUM_CHAR.test(after) ? [body.length] : [];
  for (let at = body.indexOf(" "); at >= 0; at = body.indexOf(" ", at + 1)) ends.push(at);
  for (let at = body.indexOf("-"); at >= 0; at = body.indexOf("-", at + 1)) ends.push(at);
  ends.sort((a, b) => b - a);
  const bodyStart = matchEnd - match[1].length;
  for (const end of ends) {
    const bban = body.slice(0, end).replace(/[ -]/g, "");
    if (bban.length >= 11 && mod97(bban + prefix) === 1) return bodyStart + end;
  }
  return null;
}

// --- IP addresses ---------------------------------------------------------------------------------

const OCTET = "(?:25[0-5]|2[0-4][0-9]|[01][0-9][0-9]|[1-9]?[0-9])";
// Not glued to a dotted number whose last group is in parentheses (``0033.(1).11.17.10.18``).
const AFTER_DOTTED_PARENTHESES = "(?<![0-9]\\.\\([0-9]{1,4}\\)\\.)";
const IPV4 = new RegExp(
  `(?<![0-9])(?<![0-9]\\.)${AFTER_DOTTED_PARENTHESES}${OCTET}(?:\\.${OCTET}){3}(?!\\.?[0-9])`,
  "g",
);
const IPV6_COLONS = /:[0-9A-Fa-f:.]*:/g;
const HEX_RUN = /[0-9A-Fa-f.]*/y;
const HEX_OR_DOT = new Set("0123456789ABCDEFabcdef.");
const IPV6_MAX = 45;

function ipv6Spans(text) {
  const spans = [];
  for (const colons of matchesOf(IPV6_COLONS, text)) {
    const inner = colons[0];
    if (!inner.includes("::") && inner.split(":").length - 1 < 6) continue;
    let start = colons.index;
    const limit = Math.max(0, start - 2 * IPV6_MAX - 1);
    while (start > limit && HEX_OR_DOT.has(text[start - 1])) start -= 1;
    const colonsEnd = colons.index + inner.length;
    const runAfter = matchAt(HEX_RUN, text, colonsEnd);
    const end = runAfter !== null ? colonsEnd + runAfter[0].length : colonsEnd;
    IPV6_COLONS.lastIndex = colonsEnd; // matchAt moved no shared state, but be explicit
    const span = ipv6InRun(text, start, end);
    if (span !== null) spans.push(span);
  }
  return spans;
}

function ipv6InRun(text, start, end) {
  if (end - start > 2 * IPV6_MAX) return null;
  const firstColon = text.indexOf(":", start);
  const lastColon = text.lastIndexOf(":", end - 1);
  const starts = [start, firstColon + (text.slice(firstColon + 1, firstColon + 2) !== ":" ? 1 : 0)];
  const ends = [end, lastColon + (text[lastColon - 1] === ":" ? 1 : 0)];
  for (const left of starts) {
    for (const right of ends) {
      const span = ipv6Candidate(text, left, right);
      if (span !== null) return span;
    }
  }
  return null;
}

function ipv6Candidate(text, start, end) {
  while (end > start && ".:".includes(text[end - 1]) && text.slice(Math.max(end - 2, 0), end) !== "::") end -= 1;
  if (start < end && text[start] === ":" && text.slice(start, start + 2) !== "::") start += 1;
  const candidate = text.slice(start, Math.max(start, end));
  if (candidate.length < 2 || candidate.length > IPV6_MAX || !looksLikeAddress(candidate)) return null;
  if (WORD_CHAR.test(charBefore(text, start)) || WORD_CHAR.test(charAt(text, end))) return null;
  return isIPv6Address(candidate) ? [start, end] : null;
}

function looksLikeAddress(candidate) {
  const groups = candidate.split(":");
  return /[0-9]/.test(candidate) || groups.length >= 8 || groups.some((group) => group.length === 4);
}

/** Whether CPython's `ipaddress.IPv6Address(text)` accepts `text` (no scope id: the candidates
 * hold only hex digits, colons and dots). */
function isIPv6Address(text) {
  if (text === "" || text.includes("/") || text.includes("%")) return false;
  const parts = text.split(":");
  if (parts.length < 3) return false;
  if (parts[parts.length - 1].includes(".")) {
    const ipv4 = ipv4Value(parts.pop());
    if (ipv4 === null) return false;
    parts.push("1", "1"); // two valid hextets stand for it
  }
  if (parts.length > 9) return false;
  let skip = null;
  for (let i = 1; i < parts.length - 1; i += 1) {
    if (parts[i] === "") {
      if (skip !== null) return false;
      skip = i;
    }
  }
  let high;
  let low;
  if (skip !== null) {
    high = skip;
    low = parts.length - skip - 1;
    if (parts[0] === "") {
      high -= 1;
      if (high) return false;
    }
    if (parts[parts.length - 1] === "") {
      low -= 1;
      if (low) return false;
    }
    if (8 - (high + low) < 1) return false;
  } else {
    if (parts.length !== 8 || parts[0] === "" || parts[parts.length - 1] === "") return false;
    high = parts.length;
    low = 0;
  }
  const used = [...parts.slice(0, high), ...(low ? parts.slice(-low) : [])];
  return used.every((hextet) => /^[0-9A-Fa-f]{1,4}$/.test(hextet));
}

function ipv4Value(text) {
  if (text === "") return null;
  const octets = text.split(".");
  if (octets.length !== 4) return null;
  for (const octet of octets) {
    if (!/^[0-9]{1,3}$/.test(octet)) return null;
    if (octet !== "0" && octet[0] === "0") return null;
    if (Number(octet) > 255) return null;
  }
  return octets;
}

function redactIpv6(text) {
  return text.includes("::") || text.split(":").length - 1 >= 6 ? replaceSpans(text, ipv6Spans(text), IP_TOKEN) : text;
}

function redactIpv4(text) {
  return text.split(".").length - 1 >= 3 ? text.replace(IPV4, IP_TOKEN) : text;
}

// --- phone numbers --------------------------------------------------------------------------------

const GROUPING = "(?:[-./ ]| [-/] )";
const notALaterGroup = (first) => `(?<![0-9][-./ ]${first})(?<![0-9] [-/] ${first})`;

const INTL_PHONE = new RegExp(
  `[+0](?<![0-9][+0])(?:(?<=\\+)|(?<=0)${notALaterGroup("0")}0)` + `[1-9](?:${GROUPING}?\\(?[0-9]\\)?){7,14}(?![0-9])`,
  "g",
);
// A national number: trunk "0" and an area code that does not start with 0, in parentheses or
// not, then groups (it may follow another digit group: this pass runs after the card and SSN
// passes); in parentheses, up to five digits after the trunk 0 and one group or more after it.
const NATIONAL_PHONE = new RegExp(
  `[(0](?<![0-9][(0])(?:(?<=\\()0[1-9][0-9]{0,4}\\)(?:${GROUPING}?[0-9]{2,4}){1,4}` +
    `|(?<=0)[1-9][0-9]{0,3}(?:${GROUPING}?[0-9]{2,4}){2,4})(?![0-9])`,
  "g",
);
// A "00" number after another digit group, which the first pass left to the card pass.
const LATER_00_PHONE = new RegExp(`0(?<![0-9+]0)0[1-9](?:${GROUPING}?\\(?[0-9]\\)?){7,14}(?![0-9])`, "g");
const NANP_AREA = "(?:\\([0-9]{3}\\) ?|[0-9]{3})";
const NANP_PHONE = new RegExp(
  `[+(0-9](?<![0-9][+(0-9])` +
    `(?:(?<=\\+)1${GROUPING}?${NANP_AREA}|(?<=1)${GROUPING}?${NANP_AREA}` +
    "|(?<=\\()[0-9]{3}\\) ?|(?<=[0-9])[0-9]{2})" +
    `${GROUPING}?[0-9]{3}${GROUPING}?[0-9]{4}(?![0-9])`,
  "g",
);
const DATE_FIRST = /[0-3]?[0-9]([-./])[0-3]?[0-9]\1(?:1[89]|20)[0-9]{2}(?![0-9])/y;
const ALL_DIGITS = /^[0-9]+$/;

function nationalLength(chunk, digits) {
  return (
    ((digits >= 10 && digits <= 12) || (digits === 9 && !ALL_DIGITS.test(chunk))) && matchAt(DATE_FIRST, chunk, 0) === null
  );
}

function later00Length(chunk, digits) {
  return digits >= 10 && digits <= 17 && !ALL_DIGITS.test(chunk);
}

function internationalLength(chunk, digits) {
  if (chunk.startsWith("+")) return digits >= 8 && digits <= 15;
  return later00Length(chunk, digits);
}

// A card's separators count, up to two (as _CHAIN_GOES_ON).
const CHAIN_GOES_ON = new RegExp(`\\)?(?:${GROUPING}|[ \u00a0\u2007\u202f\\-.]{1,2})?\\(?[0-9]`, "y");
// The longer grouping first.
const SEPARATOR_AFTER = /\)?(?: [-/] |[-./ ])?/y;
const PHONE_DIGITS = /[0-9]+/g;

/** Where the number a match starts ends (the Python module's `_phone_end`), or null. */
function phoneEnd(text, match, valid, split = true) {
  const start = match.index;
  const chunk = match[0];
  const matchEnd = start + chunk.length;
  let best = null;
  let opening = null;
  let digits = 0;
  let end = 0;
  const goesOn = matchAt(CHAIN_GOES_ON, text, matchEnd) !== null;
  for (const group of matchesOf(PHONE_DIGITS, chunk)) {
    digits += group[0].length;
    end = group.index + group[0].length;
    if (!valid(chunk.slice(0, end), digits)) continue;
    best = end;
    if (goesOn && split && opensANumber(text, start + end)) opening = end; // only a split needs one
  }
  if (!goesOn) {
    if (best !== end) return null;
    const count = (char) => chunk.split(char).length - 1;
    const closes = chunk.endsWith(")") && count(")") <= count("(");
    return closes ? matchEnd : start + end;
  }
  if (!split) return null;
  const chosen = opening !== null ? opening : best;
  return chosen === null ? null : start + chosen;
}

/** Whether, after a separator, a whole number starts at `position` (`_opens_a_number`). */
function opensANumber(text, position) {
  const separator = matchAt(SEPARATOR_AFTER, text, position);
  const at = separator !== null ? position + separator[0].length : position;
  if (text.startsWith("+", at) || opensACardOrSsn(text, at)) return true;
  // "(0044 ...", "(555-123-4567": past the parenthesis too (as _opens_a_number)
  const starts = text.startsWith("(", at) ? [at, at + 1] : [at];
  for (const start of starts) {
    if (matchAt(NANP_PHONE_AT, text, start) !== null) return true;
    for (const [pattern, valid] of NUMBER_FORMS) {
      const match = matchAt(pattern, text, start);
      if (match !== null && hasANumber(match[0], valid)) return true;
    }
  }
  return false;
}

/** Whether a card or an SSN starts at `at` (`_opens_a_card_or_ssn`), read within CARD_REACH. */
function opensACardOrSsn(text, at) {
  const ssn = matchAt(SSN_AT, text, at);
  if (ssn !== null && (ssn[1] || isPlausibleSsn(ssn[0].replaceAll(" ", "")))) return true;
  const bounded = text.slice(at, at + CARD_REACH);
  const chain = matchAt(DIGIT_CHAIN_AT, bounded, 0);
  if (chain === null) return false;
  let piece = chain[0];
  // The chain may go on past the reach: its last group may be cut, leave it out.
  if (piece.length === CARD_REACH) piece = piece.replace(/[0-9]+$/, "");
  const digits = piece.replace(/[^0-9]/g, "");
  if (digits.length < CARD_MIN) return false;
  const loose = piece.includes("/") || piece.includes(" - ");
  const window = cardWindows(piece, digits, loose).next();
  return !window.done && window.value[0] === 0;
}

// Its own pattern: hasANumber runs while phoneEnd's loop walks PHONE_DIGITS (a shared lastIndex).
const NUMBER_DIGITS = /[0-9]+/g;

function hasANumber(chunk, valid) {
  let digits = 0;
  for (const group of matchesOf(NUMBER_DIGITS, chunk)) {
    digits += group[0].length;
    if (valid(chunk.slice(0, group.index + group[0].length), digits)) return true;
  }
  return false;
}

/** Every number `pattern` finds, each read to its end by phoneEnd (`_redact_phones`). */
function redactPhones(text, pattern, valid, split00 = true, anywhere = false) {
  const out = [];
  let cursor = 0;
  let position = 0;
  for (;;) {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (match === null) break;
    const split = split00 || !match[0].startsWith("00");
    let end = null;
    if (anywhere || text[match.index] === "+" || !continuesANumber(text, match.index, cursor)) {
      end = phoneEnd(text, match, valid, split);
    }
    if (end === null) {
      position = match.index + 1;
      continue;
    }
    out.push(text.slice(cursor, match.index), PHONE_TOKEN);
    cursor = position = end;
  }
  if (!out.length) return text;
  out.push(text.slice(cursor));
  return out.join("");
}

// A digit group and a grouping right before a position, and the colon of a port before it. Run on
// a window of the text that ends at the position (Python's `search(text, pos, endpos)`), with
// one more character before it for the lookbehind.
const GROUP_BEFORE = /(?<port>(?<![0-9]):)?(?<group>[0-9]+)(?:[-./ ]| [-/] )$/dg;

function continuesANumber(text, start, lastEnd) {
  const from = Math.max(0, start - 9);
  const offset = Math.max(0, from - 1);
  const window = text.slice(offset, start);
  GROUP_BEFORE.lastIndex = from - offset;
  const before = GROUP_BEFORE.exec(window);
  if (before === null) return false;
  return before.indices.groups.group[1] + offset !== lastEnd && before.groups.port === undefined;
}

// The phone forms a number after a split may take (`_NUMBER_FORMS`), sticky for matchAt.
const NUMBER_FORMS = [
  [new RegExp(LATER_00_PHONE.source, "y"), later00Length],
  [new RegExp(NATIONAL_PHONE.source, "y"), nationalLength],
];
const NANP_PHONE_AT = new RegExp(NANP_PHONE.source, "y");

function redactLaterPhones(text, anywhere = false) {
  if (text.includes("00")) text = redactPhones(text, LATER_00_PHONE, later00Length, true, anywhere);
  // National numbers before North American ones (as redact_later_phones).
  if (text.includes("0")) text = redactPhones(text, NATIONAL_PHONE, nationalLength, true, anywhere);
  return text.replace(NANP_PHONE, PHONE_TOKEN);
}

const redactPhonesAnywhere = (text) => redactLaterPhones(text, true);

function redactInternationalPhones(text) {
  if (!text.includes("+") && !text.includes("00")) return text;
  return redactPhones(text, INTL_PHONE, internationalLength, false);
}

const NANP_OR_NATIONAL = new RegExp(
  `[0-9](?:[0-9]{2}\\)? ?${GROUPING}?[0-9]{3}${GROUPING}?[0-9]{4}(?![0-9])` +
    `|(?<=(?<![0-9])0)(?:0[1-9]|[0-9]{1,4}\\)?(?:${GROUPING}?[0-9]{2,4}){2}))`,
);

function redactNorthAmericanPhones(text) {
  if (!NANP_OR_NATIONAL.test(text)) return text;
  return redactLaterPhones(text);
}

// --- card numbers ---------------------------------------------------------------------------------

const CARD_SEPARATORS = " \\u00a0\\u2007\\u202f\\-.";
const CARD_MIN = 13;
const CARD_MAX = 19;
const LOOSE_CARD_SEPARATOR = "(?<=[0-9]{3})(?: [-/] |/)";
const DIGIT_CHAIN = re(
  `[0-9](?=[0-9/${CARD_SEPARATORS}]{${CARD_MIN - 1}})(?:[${CARD_SEPARATORS}]{0,2}[0-9]|${LOOSE_CARD_SEPARATOR}[0-9])*`,
  "g",
);
const DIGITS = /[0-9]+/g;
const DIGIT_CHAIN_AT = re(DIGIT_CHAIN.source, "y");
const CARD_REACH = CARD_MAX * 4; // 19 digits, at most three separator characters after each
const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

function redactCards(text) {
  return text.replace(DIGIT_CHAIN, cardsInChain);
}

function cardsInChain(text) {
  const digits = text.replace(/[^0-9]/g, "");
  if (digits.length < CARD_MIN) return text;
  const loose = text.includes("/") || text.includes(" - ");
  if (digits.length <= CARD_MAX && luhnValid(digits) && !loose) return CARD_TOKEN;
  return replaceSpans(text, cardWindows(text, digits, loose), CARD_TOKEN);
}

function bisectLeft(array, value, low, high = array.length) {
  while (low < high) {
    const middle = (low + high) >> 1;
    if (array[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function bisectRight(array, value, low, high = array.length) {
  while (low < high) {
    const middle = (low + high) >> 1;
    if (value < array[middle]) high = middle;
    else low = middle + 1;
  }
  return low;
}

function* cardWindows(text, digits, loose) {
  const sums = [prefixSums(digits, 0), prefixSums(digits, 1)];
  const [starts, places] = digitGroups(text);
  const grouping = loose ? looseAndShortGroups(text, starts, places) : null;
  for (let first = 0; first < starts.length - 1; first += 1) {
    const a = starts[first];
    const low = bisectLeft(starts, a + CARD_MIN, first + 1);
    const high = bisectRight(starts, a + CARD_MAX, low);
    for (let last = high - 1; last >= low; last -= 1) {
      const b = starts[last];
      const total = sums[b % 2];
      if ((total[b] - total[a]) % 10 === 0 && (grouping === null || groupedAsACard(...grouping, first, last))) {
        yield [places[first], places[last - 1] + b - starts[last - 1]];
        break;
      }
    }
  }
}

function digitGroups(chain) {
  const starts = [];
  const places = [];
  let count = 0;
  for (const group of matchesOf(DIGITS, chain)) {
    starts.push(count);
    places.push(group.index);
    count += group[0].length;
  }
  starts.push(count);
  places.push(chain.length);
  return [starts, places];
}

function looseAndShortGroups(chain, starts, places) {
  const loose = [0];
  const short = [0];
  for (let k = 1; k < places.length; k += 1) {
    const size = starts[k] - starts[k - 1];
    const separator = chain.slice(places[k - 1] + size, places[k]);
    loose.push(loose[k - 1] + (separator.includes("/") || separator.length === 3 ? 1 : 0));
    short.push(short[k - 1] + (size < 3 ? 1 : 0));
  }
  return [loose, short];
}

function groupedAsACard(loose, short, first, last) {
  return loose[last - 1] === loose[first] || short[last - 1] === short[first];
}

function luhnValid(digits) {
  let total = 0;
  for (let offset = 0; offset < digits.length; offset += 1) {
    const digit = digits.charCodeAt(digits.length - 1 - offset) - 48;
    total += offset % 2 === 1 ? DOUBLED[digit] : digit;
  }
  return total % 10 === 0;
}

/** Prefix sums of the digits, the digits at offsets of `parity` doubled (Luhn's way). */
function prefixSums(digits, parity) {
  const sums = [0];
  for (let i = 0; i < digits.length; i += 1) {
    const digit = digits.charCodeAt(i) - 48;
    sums.push(sums[i] + (i % 2 === parity ? DOUBLED[digit] : digit));
  }
  return sums;
}

// --- SSN and ITIN ---------------------------------------------------------------------------------

const SSN =
  /[0-9](?<![0-9][0-9])(?:(?<![0-9]\.[0-9])[0-9]{2}([-./]| [-/] )[0-9]{2}\1[0-9]{4}|[0-9]{2}( ?)[0-9]{2}\2[0-9]{4})(?![0-9])/g;
const SSN_AT = new RegExp(SSN.source, "y");
const ITIN_GROUPS = new Set([
  ...Array.from({ length: 16 }, (_, i) => 50 + i),
  ...Array.from({ length: 19 }, (_, i) => 70 + i),
  90,
  91,
  92,
  ...Array.from({ length: 6 }, (_, i) => 94 + i),
]);

/** Whether nine digits have the structure of an SSN (SSA rules) or of an ITIN. */
export function isPlausibleSsn(digits) {
  const area = Number(digits.slice(0, 3));
  const group = Number(digits.slice(3, 5));
  const serial = Number(digits.slice(5));
  if (area >= 900) return ITIN_GROUPS.has(group);
  return area !== 0 && area !== 666 && group !== 0 && serial !== 0;
}

function redactSsns(text) {
  return text.replace(SSN, (chunk, separator) =>
    separator || isPlausibleSsn(chunk.replaceAll(" ", "")) ? SSN_TOKEN : chunk,
  );
}

// --- the digit passes -----------------------------------------------------------------------------

const CHAIN_CHARACTERS = "0-9 .\\-()/\\u00a0\\u2007\\u202f";
const DIGIT_SCAN = re(
  `[0-9](?<![0-9][0-9])(?:(?<=(?<![A-Za-z0-9])[A-Za-z]{2}[0-9])(?=[0-9])(?<iban>)` +
    `(?:[${CHAIN_CHARACTERS}]{5,}[0-9])?|[${CHAIN_CHARACTERS}]{5,}[0-9])`,
  "g",
);
const SHORTEST_CHAIN = 7;
const WINDOW_BEFORE = 4;
const WINDOW_AFTER = 2;

function digitPasses(text) {
  let [windows, ibanStarts] = digitWindows(text);
  if (ibanStarts.length) {
    const ibans = ibanSpans(text, ibanStarts);
    if (ibans.length) {
      text = replaceSpans(text, ibans, IBAN_TOKEN);
      [windows] = digitWindows(text);
    }
  }
  if (!windows.length) return text;
  const out = [];
  let cursor = 0;
  for (const [start, end, longest] of windows) {
    const piece = readWindow(text.slice(start, end), longest, WINDOW_PASSES, READ_AGAIN);
    out.push(text.slice(cursor, start), piece);
    cursor = end;
  }
  out.push(text.slice(cursor));
  return out.join("");
}

/** The window's passes, read again in each other order of `again` (phones first, cards first)
 * while digits are left; the reading that leaves fewest digits wins (`read_window`). */
function readWindow(piece, longest, passes, again) {
  let best = read(piece, longest, passes);
  if (best === piece) return best;
  for (const order of again) {
    if (!/[0-9]/.test(best)) break;
    const reading = read(piece, longest, order);
    if (countDigits(reading) < countDigits(best)) best = reading;
  }
  return best;
}

function read(piece, longest, passes) {
  for (const [shortest, redact] of passes) {
    if (longest >= shortest) piece = redact(piece);
  }
  return piece;
}

function countDigits(text) {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) count++;
  }
  return count;
}

/** The UTF-16 index `count` code points before `index` (0 at most). */
function codePointsBefore(text, index, count) {
  for (let step = 0; step < count && index > 0; step++) index -= charBefore(text, index).length;
  return index;
}

/** The UTF-16 index `count` code points after `index`, one unit a step past the end (Python's
 * `end + count`, which a slice then clamps). */
function codePointsAfter(text, index, count) {
  for (let step = 0; step < count; step++) index += index < text.length ? charAt(text, index).length : 1;
  return index;
}

const countOf = (text, char) => text.split(char).length - 1;

function digitWindows(text) {
  const windows = [];
  const ibanStarts = [];
  let last = [0, -1, 0];
  for (const chain of matchesOf(DIGIT_SCAN, text)) {
    let start = chain.index;
    const end = start + chain[0].length;
    if (chain.groups.iban !== undefined) {
      ibanStarts.push(start);
      if (end - start < SHORTEST_CHAIN) continue;
    }
    let digits = end - start;
    if (digits >= SHORTEST_NUMERIC_PII) {
      const group = chain[0];
      digits -= countOf(group, " ") + countOf(group, "-") + countOf(group, ".") + countOf(group, "/");
    }
    // Code points, as Python counts them: a window's edges (and so which windows merge) are the
    // same around an astral character.
    start = codePointsBefore(text, start, WINDOW_BEFORE);
    const after = codePointsAfter(text, end, WINDOW_AFTER);
    if (start <= last[1]) {
      last[1] = after;
      last[2] = Math.max(last[2], digits);
    } else {
      last = [start, after, digits];
      windows.push(last);
    }
  }
  return [windows, ibanStarts];
}

const PASSES = [redactSecrets, redactEmails, redactIpv6, digitPasses];
const WINDOW_PASSES = [
  [4, redactIpv4], // 1.1.1.1; first, so a phone number cannot run into an address
  [8, redactInternationalPhones], // 8 digits at least
  [CARD_MIN, redactCards],
  [9, redactSsns],
  [9, redactNorthAmericanPhones], // 10 digits; national and later 00 numbers from 9
];
// The second reading of a window (readWindow): every phone first.
const PHONES_FIRST = [
  WINDOW_PASSES[0], // IPv4
  WINDOW_PASSES[1], // international
  [9, redactPhonesAnywhere], // the later phone passes, in any digit group
  WINDOW_PASSES[3], // SSN
  WINDOW_PASSES[2], // cards
];
// The third reading: SSNs and cards before the phone numbers (a card after a "+" is no phone
// number), SSNs before cards (a card read on into an SSN's first group).
const CARDS_FIRST = [WINDOW_PASSES[0], WINDOW_PASSES[3], WINDOW_PASSES[2], WINDOW_PASSES[1], WINDOW_PASSES[4]];
const READ_AGAIN = [PHONES_FIRST, CARDS_FIRST];
