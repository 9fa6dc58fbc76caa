/**
 * The issues of a failed decode, as a caller reads them: one
 * `{ path, message }` per failing leaf, `path` like `guests[1].age` (the root
 * is `""`), the message saying what was expected and what was sent (quoted
 * values cut to 40 characters), all gathered into one `ValidationError`.
 */
import * as Result from "effect/Result"
import type * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import { type Issue, ValidationError } from "../../ActionError.ts"
import { shorten } from "../text.ts"
import * as Lossless from "../lossless.ts"
import { flattenUnion, jsonIn } from "./coerce.ts"

const MAX_SHOWN = 40

const truncate = (text: string): string => shorten(text, MAX_SHOWN)

/** A value as a message quotes it: JSON where possible, at most 40 characters. */
export const show = (value: unknown): string => {
  switch (typeof value) {
    case "undefined":
      return "undefined"
    case "number":
    case "boolean":
    case "symbol":
    case "function":
      return truncate(String(value))
    case "bigint":
      return truncate(`${value}n`)
  }
  const json = Result.try(() => JSON.stringify(value))
  return truncate(Result.isSuccess(json) && typeof json.success === "string" ? json.success : String(value))
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** `guests[1].age`; the root is `""`; other keys as `["a key"]`. */
const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else if (typeof segment === "string" && IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`
    else out += `[${typeof segment === "string" ? JSON.stringify(segment) : String(segment)}]`
  }
  return out
}

/** The raw value the caller sent at a path (JSON strings along the way decoded once, as the coercer did). */
const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = root
  for (const segment of path) {
    if (typeof current === "string") current = jsonIn(current, typeof segment === "number" ? "[" : "{") ?? current
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, segment)) return undefined
    current = (current as Record<PropertyKey, unknown>)[segment]
  }
  return current
}

const hasCheck = (checks: SchemaAST.Checks | undefined, id: string): boolean =>
  checks?.some((check) =>
    check._tag === "Filter" ? check.annotations?.representation?.id === id : hasCheck(check.checks, id)
  ) === true

const showLiteral = (literal: SchemaAST.LiteralValue): string =>
  typeof literal === "bigint" ? `${literal}n` : typeof literal === "string" ? JSON.stringify(literal) : String(literal)

/** What a schema node expects, in words: `an integer`, `one of "a" | "b"`, `a string or null`. */
const describe = (ast: SchemaAST.AST): string => {
  const expected = ast.annotations?.expected
  if (typeof expected === "string") return expected
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return hasCheck(ast.checks, "effect/schema/isInt") ? "an integer" : "a number"
    case "Boolean":
      return "a boolean"
    case "BigInt":
      return "a bigint"
    case "Symbol":
    case "UniqueSymbol":
      return "a symbol"
    case "Null":
      return "null"
    case "Undefined":
    case "Void":
      return "undefined"
    case "Never":
      return "no value"
    case "Unknown":
    case "Any":
      return "any value"
    case "Literal":
      return showLiteral(ast.literal)
    case "Enum":
      return `one of ${ast.enums.map(([, value]) => showLiteral(value)).join(" | ")}`
    case "Objects":
    case "ObjectKeyword":
      return "an object"
    case "Arrays":
      return "an array"
    case "TemplateLiteral":
      return "a string of the expected form"
    case "Declaration":
      return "a valid value"
    case "Suspend":
      return describe(ast.thunk())
    case "Union": {
      const members = flattenUnion(ast.types)
      const literals: Array<string> = []
      for (const member of members) {
        if (member._tag === "Literal") literals.push(showLiteral(member.literal))
        else if (member._tag === "Enum") for (const [, value] of member.enums) literals.push(showLiteral(value))
      }
      if (literals.length === members.length) return `one of ${literals.join(" | ")}`
      // JSON cannot carry `undefined`: "or undefined" (from `Schema.optional`) would only be noise.
      const present = members.filter((member) => member._tag !== "Undefined" && member._tag !== "Void")
      return [...new Set((present.length > 0 ? present : members).map(describe))].join(" or ")
    }
  }
}

const messageOf = (
  annotations: { readonly [key: string]: unknown } | undefined,
  key = "message"
): string | undefined => {
  const message = annotations?.[key]
  return typeof message === "string" ? message : undefined
}

/** A Filter issue whose own words describe the failure (rather than a nested issue's). */
const isFilterLeaf = (issue: SchemaIssue.Filter): boolean =>
  messageOf(issue.filter.annotations) !== undefined ||
  (issue.issue._tag === "InvalidValue" && messageOf(issue.issue.annotations) === undefined)

const expectedMessage = (expected: string | undefined, got: () => string): string =>
  expected === undefined ? `invalid value, ${got()}` : `expected ${expected}, ${got()}`

const leafMessage = (issue: SchemaIssue.Leaf | SchemaIssue.Filter | SchemaIssue.AnyOf, got: () => string): string => {
  switch (issue._tag) {
    case "Filter": {
      const inner = issue.issue._tag === "InvalidValue" ? messageOf(issue.issue.annotations, "expected") : undefined
      return (
        messageOf(issue.filter.annotations) ??
        expectedMessage(inner ?? messageOf(issue.filter.annotations, "expected"), got)
      )
    }
    case "AnyOf":
    case "InvalidType":
      return messageOf(issue.ast.annotations) ?? `expected ${describe(issue.ast)}, ${got()}`
    case "OneOf":
      return messageOf(issue.ast.annotations) ?? `matches more than one of ${describe(issue.ast)}, ${got()}`
    case "InvalidValue":
      return messageOf(issue.annotations) ?? expectedMessage(messageOf(issue.annotations, "expected"), got)
    case "MissingKey":
      return messageOf(issue.annotations, "messageMissingKey") ?? "missing"
    case "UnexpectedKey":
      return messageOf(issue.ast.annotations, "messageUnexpectedKey") ?? "unexpected key"
    case "Forbidden":
      return messageOf(issue.annotations) ?? "forbidden operation"
  }
}

/** Walks the issue tree; each leaf becomes one `{ path, message }`. */
const collectIssues = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  root: unknown,
  out: Array<Issue>
): void => {
  switch (issue._tag) {
    case "Pointer":
      collectIssues(issue.issue, [...path, ...issue.path], root, out)
      break
    case "Composite":
      for (const inner of issue.issues) collectIssues(inner, path, root, out)
      break
    case "Encoding":
      collectIssues(issue.issue, path, root, out)
      break
    default: {
      if (issue._tag === "Filter" && !isFilterLeaf(issue)) {
        collectIssues(issue.issue, path, root, out)
      } else if (issue._tag === "AnyOf" && issue.issues.length === 1 && issue.issues[0] !== undefined) {
        // One candidate member was tried: its failure is the precise one.
        collectIssues(issue.issues[0], path, root, out)
      } else {
        const value = valueAt(root, path)
        // An integer the JSON parser kept as its digits, where a Number was expected: said as what it is.
        const beyond =
          Lossless.isExact(value) &&
          Lossless.isInteger(value) &&
          issue._tag === "InvalidType" &&
          issue.ast._tag === "Number"
        out.push({
          path: formatPath(path),
          message: beyond
            ? `${Lossless.digits(value)} is beyond 2^53; a Number cannot hold it exactly`
            : leafMessage(issue, () => `got ${show(value)}`)
        })
      }
    }
  }
}

/** A `ValidationError` of `action` holding `issues`, its message listing them. */
export const validationError = (action: string, issues: ReadonlyArray<Issue>): ValidationError =>
  new ValidationError({
    action,
    message: `Invalid arguments for ${action}: ${issues
      .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
      .join("; ")}`,
    issues: [...issues]
  })

/** The `ValidationError` of a decode that failed with `issue`, `root` being what the caller sent. */
export const toValidationError = (action: string, issue: SchemaIssue.Issue, root: unknown): ValidationError => {
  const issues: Array<Issue> = []
  collectIssues(issue, [], root, issues)
  return validationError(action, issues)
}
