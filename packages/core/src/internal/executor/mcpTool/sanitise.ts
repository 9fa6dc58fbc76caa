/**
 * What an MCP server supplies for a model to read, without the characters a person cannot see
 * (`VisibleText.sanitise`): a connection's server instructions and its tools' titles and descriptions —
 * those of the tool, of its annotations and anywhere inside its input and output schemas — sanitised as the
 * connection is opened and as each listing is read. A tool whose name, property names, `enum` or `const`
 * values hold such characters is left out (the name is what a call is routed by, the values what the server
 * checks: neither can be changed without changing the tool). Each sanitised or left-out tool, and sanitised
 * instructions, are reported once per listing, naming the tool, the fields and the characters.
 */
import * as Effect from "effect/Effect"
import type { Connection, ServerInfo, ToolDefinition } from "../../../McpClient.ts"
import * as VisibleText from "../../../VisibleText.ts"

/** What was found in one tool (or the instructions: `tool` absent). */
export interface Finding {
  readonly tool: string | undefined
  readonly fields: ReadonlyArray<string>
  readonly removed: ReadonlyArray<number>
  /** The tool was left out (a name or value held them). */
  readonly leftOut: boolean
}

interface Scan {
  readonly fields: Array<string>
  readonly removed: Array<number>
  unchangeable: boolean
}

const text = (scan: Scan, field: string, value: string): string => {
  const { text: clean, removed } = VisibleText.sanitise(value)
  if (removed.length > 0) {
    scan.fields.push(field)
    scan.removed.push(...removed)
  }
  return clean
}

/** A value that must stay as it is: noted when it holds hidden characters. */
const fixed = (scan: Scan, field: string, value: unknown) => {
  if (typeof value === "string" && VisibleText.sanitise(value).removed.length > 0) {
    scan.fields.push(field)
    scan.removed.push(...VisibleText.sanitise(value).removed)
    scan.unchangeable = true
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A JSON Schema with its titles and descriptions sanitised; its names and values checked. */
const schema = (scan: Scan, path: string, value: unknown, depth = 0): unknown => {
  if (depth > 64) return value
  if (Array.isArray(value)) return value.map((item, i) => schema(scan, `${path}.${i}`, item, depth + 1))
  if (!isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}.${key}`
    if ((key === "description" || key === "title") && typeof item === "string") out[key] = text(scan, at, item)
    else if (key === "enum" && Array.isArray(item)) {
      for (const [i, entry] of item.entries()) fixed(scan, `${at}.${i}`, entry)
      out[key] = item
    } else if (key === "const") {
      fixed(scan, at, item)
      out[key] = item
    } else if (
      (key === "properties" || key === "$defs" || key === "definitions" || key === "patternProperties") &&
      isRecord(item)
    ) {
      const named: Record<string, unknown> = {}
      for (const [name, sub] of Object.entries(item)) {
        fixed(scan, `${at}.${name}`, name)
        named[name] = schema(scan, `${at}.${name}`, sub, depth + 1)
      }
      out[key] = named
    } else if (key === "required" && Array.isArray(item)) {
      out[key] = item
    } else out[key] = schema(scan, at, item, depth + 1)
  }
  return out
}

/** A tool sanitised, or `undefined` when it must be left out; with what was found. */
const tool = (
  definition: ToolDefinition
): { readonly tool: ToolDefinition | undefined; readonly finding: Finding | undefined } => {
  const scan: Scan = { fields: [], removed: [], unchangeable: false }
  fixed(scan, "name", definition.name)
  const annotations = definition.annotations
  const cleaned: ToolDefinition = {
    ...definition,
    ...(definition.title === undefined ? {} : { title: text(scan, "title", definition.title) }),
    ...(definition.description === undefined ? {} : { description: text(scan, "description", definition.description) }),
    inputSchema: schema(scan, "inputSchema", definition.inputSchema) as ToolDefinition["inputSchema"],
    ...(definition.outputSchema === undefined
      ? {}
      : { outputSchema: schema(scan, "outputSchema", definition.outputSchema) as ToolDefinition["outputSchema"] }),
    ...(annotations?.title === undefined
      ? {}
      : { annotations: { ...annotations, title: text(scan, "annotations.title", annotations.title) } })
  }
  if (scan.fields.length === 0) return { tool: definition, finding: undefined }
  const finding = { tool: definition.name, fields: scan.fields, removed: scan.removed, leftOut: scan.unchangeable }
  return { tool: scan.unchangeable ? undefined : cleaned, finding }
}

/** A listing sanitised (see the module doc), with what was found in it. */
export const listing = (
  tools: ReadonlyArray<ToolDefinition>
): { readonly tools: ReadonlyArray<ToolDefinition>; readonly findings: ReadonlyArray<Finding> } => {
  const findings: Array<Finding> = []
  const kept: Array<ToolDefinition> = []
  for (const definition of tools) {
    const { tool: cleaned, finding } = tool(definition)
    if (finding !== undefined) findings.push(finding)
    if (cleaned !== undefined) kept.push(cleaned)
  }
  return { tools: findings.length === 0 ? tools : kept, findings }
}

/** A server's instructions sanitised, with what was found. */
export const instructions = (
  server: ServerInfo
): { readonly server: ServerInfo; readonly finding: Finding | undefined } => {
  if (server.instructions === undefined) return { server, finding: undefined }
  const { text: clean, removed } = VisibleText.sanitise(server.instructions)
  if (removed.length === 0) return { server, finding: undefined }
  return {
    server: { ...server, instructions: clean },
    finding: { tool: undefined, fields: ["instructions"], removed, leftOut: false }
  }
}

/**
 * The connection as the agent reads it: its instructions and every listing sanitised, each listing once (an
 * unchanged listing is the same array, so it is sanitised and reported once), each finding told to `report`.
 */
export const connection = (
  opened: Connection,
  report: (finding: Finding) => Effect.Effect<void>
): Effect.Effect<Connection> => {
  const { server, finding } = instructions(opened.server)
  const seen = new WeakMap<ReadonlyArray<ToolDefinition>, ReadonlyArray<ToolDefinition>>()
  const listTools: Connection["listTools"] = (options) =>
    Effect.flatMap(opened.listTools(options), (tools) => {
      const known = seen.get(tools)
      if (known !== undefined) return Effect.succeed(known)
      const sanitised = listing(tools)
      seen.set(tools, sanitised.tools)
      return Effect.as(Effect.forEach(sanitised.findings, report, { discard: true }), sanitised.tools)
    })
  const wrapped: Connection = { server, isOpen: opened.isOpen, listTools, callTool: opened.callTool }
  return Effect.as(finding === undefined ? Effect.void : report(finding), wrapped)
}
