/**
 * The URL and body of a webService call (its `endpoint` and `paramType`): the endpoint template's `{name}` placeholders
 * filled with encoded arguments, then every argument sent as QUERY, PATH or
 * BODY.
 *
 * Rules, each failing as a list of issues naming the field:
 * - A placeholder stands in a path segment or the query; never in the scheme,
 *   host, port, user info or fragment. Its value is encoded with
 *   `encodeURIComponent`, so it cannot leave its segment or query value. A
 *   path segment that would be empty, `.` or `..` after filling is rejected:
 *   URL normalisation would otherwise remove it or climb a level.
 * - A placeholder or QUERY/PATH value is a scalar: a string (well-formed
 *   Unicode), a finite number, a boolean, a bigint or a valid Date (ISO form).
 *   Objects are rejected; arrays are rejected except in QUERY, where each
 *   element becomes a repeated key (`id=a&id=b`; an empty array omits the
 *   key; `null` elements are dropped).
 * - `null` and absent optional values are omitted (never sent as "null"); a
 *   placeholder's value is required.
 * - BODY is one JSON object of the arguments in declared order.
 *
 * Also whether a call may be repeated when its outcome is unknown, which the
 * run step asks without loading the HTTP client.
 */
import * as Result from "effect/Result"
import type * as Action from "../../Action.ts"
import type { Issue } from "../../ActionError.ts"

const idempotentMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/**
 * Whether repeating the call is safe when its outcome is unknown: an
 * idempotent method, or `idempotent: true`.
 */
export const isSafeToRepeat = (action: Action.WebService<any, any, any>): boolean =>
  action.idempotent || idempotentMethods.has(action.method)

/** Where the arguments go. */
export type ParamType = "QUERY" | "PATH" | "BODY"

type Token = string | { readonly placeholder: string }

/** A parsed endpoint template. */
export interface Template {
  /** `scheme://authority`, or `""` for a path-only endpoint. */
  readonly origin: string
  /** Path segments after the first `/` (empty when the endpoint has no path). */
  readonly segments: ReadonlyArray<ReadonlyArray<Token>>
  readonly hasPath: boolean
  readonly query: ReadonlyArray<Token> | undefined
  readonly fragment: string | undefined
}

const placeholderPattern = /\{([A-Za-z_$][\w$]*)\}/g

const tokenize = (text: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let last = 0
  for (const match of text.matchAll(placeholderPattern)) {
    if (match.index > last) tokens.push(text.slice(last, match.index))
    tokens.push({ placeholder: match[1]! })
    last = match.index + match[0].length
  }
  if (last < text.length) tokens.push(text.slice(last))
  return tokens
}

const placeholdersIn = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(placeholderPattern)].map((match) => match[1]!)

const absolute = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s

/**
 * Parses an endpoint template against the action's parameter names. Fails
 * with the issues found: a placeholder in the scheme, host or fragment, a
 * placeholder naming no parameter, a scheme other than http(s), or an
 * endpoint that is neither an absolute http(s) URL nor a path starting
 * with `/`.
 */
export const parse = (endpoint: string, parameters: ReadonlyArray<string>): Result.Result<Template, Array<Issue>> => {
  const issues: Array<Issue> = []
  const known = new Set(parameters)
  let origin = ""
  let rest = endpoint
  const match = absolute.exec(endpoint)
  if (match !== null) {
    const [, scheme = "", authority = "", tail = ""] = match
    for (const name of placeholdersIn(`${scheme}://${authority}`)) {
      issues.push({
        path: "endpoint",
        message: `the placeholder {${name}} stands in the scheme or host of ${endpoint}; placeholders may only fill path segments and query values`
      })
    }
    if (!/^https?$/i.test(scheme)) {
      issues.push({ path: "endpoint", message: `the scheme of ${endpoint} is not http or https` })
    }
    origin = `${scheme}://${authority}`
    rest = tail
  } else if (!endpoint.startsWith("/")) {
    issues.push({
      path: "endpoint",
      message: `${endpoint} is neither an absolute http(s) URL nor a path starting with "/"`
    })
  }
  const hashAt = rest.indexOf("#")
  const fragment = hashAt < 0 ? undefined : rest.slice(hashAt + 1)
  const beforeHash = hashAt < 0 ? rest : rest.slice(0, hashAt)
  const queryAt = beforeHash.indexOf("?")
  const path = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt)
  const query = queryAt < 0 ? undefined : beforeHash.slice(queryAt + 1)
  for (const name of fragment === undefined ? [] : placeholdersIn(fragment)) {
    issues.push({
      path: "endpoint",
      message: `the placeholder {${name}} stands in the fragment of ${endpoint}, which is never sent`
    })
  }
  for (const name of placeholdersIn(path + (query ?? ""))) {
    if (!known.has(name)) {
      issues.push({ path: "endpoint", message: `the placeholder {${name}} names no parameter of the action` })
    }
  }
  if (issues.length > 0) return Result.fail(issues)
  return Result.succeed({
    origin,
    hasPath: path.length > 0,
    segments: path.length === 0 ? [] : path.slice(1).split("/").map(tokenize),
    query: query === undefined ? undefined : tokenize(query),
    fragment
  })
}

// In unicode mode a surrogate matches only when it is not half of a pair.
const loneSurrogate = /\p{Cs}/u

/** The text form of a scalar argument, `undefined` when absent, or why it cannot be one. */
const scalar = (value: unknown): Result.Result<string | undefined, string> => {
  if (value === undefined || value === null) return Result.succeed(undefined)
  switch (typeof value) {
    case "string":
      return loneSurrogate.test(value) ? Result.fail("the text is not well-formed Unicode") : Result.succeed(value)
    case "number":
      return Number.isFinite(value) ? Result.succeed(String(value)) : Result.fail(`${value} is not a finite number`)
    case "boolean":
    case "bigint":
      return Result.succeed(String(value))
  }
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? Result.fail("the date is invalid") : Result.succeed(value.toISOString())
  }
  return Result.fail(
    `expected a single value (string, number or boolean), got ${Array.isArray(value) ? "an array" : "an object"}`
  )
}

const encode = encodeURIComponent

// A placeholder's argument is also sent by paramType: report its fault once.
const distinct = (issues: ReadonlyArray<Issue>): Array<Issue> => {
  const seen = new Set<string>()
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** What a built request carries. */
export interface Built {
  readonly url: string
  /** The JSON body text (BODY only). */
  readonly body: string | undefined
}

/**
 * Fills the template with the arguments and sends every argument (in
 * `fields` order) the `paramType` way. Fails with every issue found, each
 * naming its field.
 */
export const build = (
  template: Template,
  fields: ReadonlyArray<string>,
  args: Readonly<Record<string, unknown>>,
  paramType: ParamType
): Result.Result<Built, Array<Issue>> => {
  const issues: Array<Issue> = []
  // The encoded value of a placeholder, or undefined (with an issue) when it has none.
  const fill = (name: string): string | undefined => {
    const text = scalar(args[name])
    if (Result.isFailure(text)) {
      issues.push({ path: name, message: text.failure })
      return undefined
    }
    if (text.success === undefined) {
      issues.push({ path: name, message: `a value is required for the placeholder {${name}}` })
      return undefined
    }
    return encode(text.success)
  }

  const segments: Array<string> = []
  for (const tokens of template.segments) {
    let segment = ""
    let filled = true
    const names: Array<string> = []
    for (const token of tokens) {
      if (typeof token === "string") segment += token
      else {
        names.push(token.placeholder)
        const value = fill(token.placeholder)
        if (value === undefined) filled = false
        else segment += value
      }
    }
    if (filled && names.length > 0 && (segment === "" || segment === "." || segment === "..")) {
      for (const name of names) {
        issues.push({
          path: name,
          message: `the value would make the path segment ${JSON.stringify(segment)}, which changes the URL's structure`
        })
      }
    }
    segments.push(segment)
  }
  let query =
    template.query === undefined
      ? undefined
      : template.query.map((token) => (typeof token === "string" ? token : (fill(token.placeholder) ?? ""))).join("")

  let body: string | undefined
  switch (paramType) {
    case "QUERY": {
      const pairs: Array<string> = []
      for (const field of fields) {
        const value = args[field]
        const items: ReadonlyArray<unknown> = Array.isArray(value) ? value : [value]
        items.forEach((item, index) => {
          const text = scalar(item)
          if (Result.isFailure(text)) {
            issues.push({ path: Array.isArray(value) ? `${field}[${index}]` : field, message: text.failure })
          } else if (text.success !== undefined) {
            pairs.push(`${encode(field)}=${encode(text.success)}`)
          }
        })
      }
      if (pairs.length > 0) {
        const extra = pairs.join("&")
        query = query === undefined || query === "" ? extra : `${query}${query.endsWith("&") ? "" : "&"}${extra}`
      }
      break
    }
    case "PATH": {
      if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop()
      for (const field of fields) {
        const text = scalar(args[field])
        if (Result.isFailure(text)) issues.push({ path: field, message: text.failure })
        else if (text.success !== undefined) {
          const segment = encode(text.success)
          if (segment === "" || segment === "." || segment === "..") {
            issues.push({
              path: field,
              message: `the value would make the path segment ${JSON.stringify(segment)}, which changes the URL's structure`
            })
          } else segments.push(segment)
        }
      }
      break
    }
    case "BODY": {
      const members: Array<string> = []
      for (const field of fields) {
        if (args[field] === undefined) continue
        const text = Result.try({
          try: () => JSON.stringify(args[field]) as string | undefined,
          catch: (cause) => (cause instanceof Error ? cause.message : String(cause))
        })
        if (Result.isFailure(text)) issues.push({ path: field, message: `cannot be sent as JSON: ${text.failure}` })
        else if (text.success === undefined) issues.push({ path: field, message: "cannot be sent as JSON" })
        else members.push(`${JSON.stringify(field)}:${text.success}`)
      }
      body = `{${members.join(",")}}`
      break
    }
  }
  if (issues.length > 0) return Result.fail(distinct(issues))
  const path = template.hasPath || segments.length > 0 ? `/${segments.join("/")}` : ""
  const url =
    template.origin +
    path +
    (query === undefined ? "" : `?${query}`) +
    (template.fragment === undefined ? "" : `#${template.fragment}`)
  return Result.succeed({ url, body })
}
