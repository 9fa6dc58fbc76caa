/**
 * What a served agent offers besides tools: resources (declared ones,
 * templates, and the documents of its roles' knowledge sources), prompts
 * (one per role, and declared ones), and completions for the values of a
 * prompt argument or template variable that has a fixed set. Unknown names
 * and URIs are JSON-RPC errors: -32602 for a prompt, -32002 for a resource.
 * Names a client sends are looked up among own keys only (never
 * `Object.prototype`'s), and are bounded: a URI past 8,192 characters or a
 * name past 256 is -32602 naming the cap.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js"
import {
  type CompleteRequest,
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  McpError,
  type ReadResourceResult
} from "@modelcontextprotocol/sdk/types.js"
import { KnowledgeBase, type Role } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import type * as McpPrompt from "../../McpPrompt.ts"
import type * as McpResource from "../../McpResource.ts"

/** The JSON-RPC error code MCP gives to a resource that does not exist. */
export const resourceNotFound = -32002

/** The longest URI a client may send (a resource to read, a template to complete): past it, -32602 naming the cap. */
export const maxUriLength = 8_192

/** The longest name a client may send (a prompt, an argument, a variable): past it, -32602 naming the cap. */
export const maxNameLength = 256

/** The most completion values sent at once (the specification's cap). */
const maxCompletions = 100

/** What an agent serves besides tools. */
export interface Catalog {
  readonly resources: ReadonlyArray<McpResource.Resource>
  readonly templates: ReadonlyArray<McpResource.Template>
  readonly prompts: ReadonlyArray<McpPrompt.McpPrompt>
  /** The knowledge sources of the agent's roles, served as one resource per document. */
  readonly knowledge: ReadonlyArray<string>
}

/** The catalog of roles and declarations. */
export const make = (
  roles: ReadonlyArray<Role.Any>,
  resources: ReadonlyArray<McpResource.Any>,
  prompts: ReadonlyArray<McpPrompt.McpPrompt>,
  rolePrompts: ReadonlyArray<McpPrompt.McpPrompt>
): Catalog => ({
  resources: resources.filter((r): r is McpResource.Resource => r._tag === "Resource"),
  templates: resources.filter((r): r is McpResource.Template => r._tag === "Template"),
  prompts: [...rolePrompts, ...prompts],
  knowledge: [...new Set(roles.flatMap((role) => role.spec.knowledge ?? []))]
})

const mimeOf = (source: string): string =>
  source.endsWith(".md") ? "text/markdown" : source.endsWith(".json") ? "application/json" : "text/plain"

const documents = (catalog: Catalog) =>
  catalog.knowledge.length === 0
    ? Effect.succeed([])
    : Effect.map(
        Effect.orElseSucceed(KnowledgeBase.loadFiles(catalog.knowledge), () => []),
        (docs) => docs.map((doc) => ({ ...doc, uri: pathToFileURL(resolve(doc.source)).href }))
      )

const contentsOf = (uri: string, mimeType: string | undefined, body: string | Uint8Array): ReadResourceResult => ({
  contents: [
    typeof body === "string"
      ? { uri, ...(mimeType === undefined ? {} : { mimeType }), text: body }
      : { uri, ...(mimeType === undefined ? {} : { mimeType }), blob: Buffer.from(body).toString("base64") }
  ]
})

const bodyOf = (uri: string, body: McpResource.Body): Effect.Effect<string | Uint8Array, McpError> =>
  Effect.isEffect(body)
    ? Effect.mapError(
        body,
        (cause) => new McpError(ErrorCode.InternalError, `Resource ${uri} could not be read: ${String(cause)}`)
      )
    : Effect.succeed(body)

/** `resources/list`. */
export const listResources = (catalog: Catalog): Effect.Effect<ListResourcesResult> =>
  Effect.map(documents(catalog), (docs) => ({
    resources: [
      ...catalog.resources.map(({ uri, name, title, description, mimeType }) => ({
        uri,
        name,
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
        ...(mimeType === undefined ? {} : { mimeType })
      })),
      ...docs.map((doc) => ({ uri: doc.uri, name: doc.source, mimeType: mimeOf(doc.source) }))
    ]
  }))

/** `resources/templates/list`. */
export const listTemplates = (catalog: Catalog): ListResourceTemplatesResult => ({
  resourceTemplates: catalog.templates.map(({ uriTemplate, name, title, description, mimeType }) => ({
    uriTemplate,
    name,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(mimeType === undefined ? {} : { mimeType })
  }))
})

/** `resources/read`: a declared resource, then a template that matches, then a knowledge document. */
export const read = (catalog: Catalog, uri: string): Effect.Effect<ReadResourceResult, McpError> => {
  if (uri.length > maxUriLength) return Effect.fail(tooLong("uri", maxUriLength))
  const fixed = catalog.resources.find((resource) => resource.uri === uri)
  if (fixed !== undefined) return Effect.map(bodyOf(uri, fixed.read()), (body) => contentsOf(uri, fixed.mimeType, body))
  for (const template of catalog.templates) {
    const matched = new UriTemplate(template.uriTemplate).match(uri)
    if (matched !== null) {
      const variables = Object.fromEntries(
        Object.entries(matched).map(([key, value]) => [key, Array.isArray(value) ? value.join(",") : value])
      )
      return Effect.map(bodyOf(uri, template.read(variables, uri)), (body) => contentsOf(uri, template.mimeType, body))
    }
  }
  return Effect.flatMap(documents(catalog), (docs) => {
    const doc = docs.find((candidate) => candidate.uri === uri)
    return doc === undefined
      ? Effect.fail(new McpError(resourceNotFound, `Resource not found: ${uri}`))
      : Effect.succeed(contentsOf(uri, mimeOf(doc.source), doc.text))
  })
}

/** `prompts/list`. */
export const listPrompts = (catalog: Catalog): ListPromptsResult => ({
  prompts: catalog.prompts.map((prompt) => ({
    name: prompt.name,
    ...(prompt.title === undefined ? {} : { title: prompt.title }),
    ...(prompt.description === undefined ? {} : { description: prompt.description }),
    arguments: Object.entries(prompt.arguments ?? {}).map(([name, argument]) => ({
      name,
      ...(argument.description === undefined ? {} : { description: argument.description }),
      required: argument.required === true
    }))
  }))
})

/** `prompts/get`: unknown names and missing required arguments are -32602. */
export const getPrompt = (
  catalog: Catalog,
  name: string,
  args: Readonly<Record<string, string>> | undefined
): Effect.Effect<GetPromptResult, McpError> => {
  if (name.length > maxNameLength) return Effect.fail(tooLong("name", maxNameLength))
  const prompt = catalog.prompts.find((candidate) => candidate.name === name)
  if (prompt === undefined) {
    const known = catalog.prompts.map((candidate) => candidate.name).join(", ")
    return Effect.fail(new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}; available: ${known || "none"}`))
  }
  const given = args ?? {}
  const missing = Object.entries(prompt.arguments ?? {}).filter(
    ([key, argument]) => argument.required === true && own(given, key) === undefined
  )
  if (missing.length > 0) {
    const names = missing.map(([key]) => key).join(", ")
    return Effect.fail(new McpError(ErrorCode.InvalidParams, `Prompt ${name}: missing required argument ${names}`))
  }
  const made = prompt.messages(given)
  const messages = Effect.isEffect(made)
    ? Effect.mapError(made, (cause) => new McpError(ErrorCode.InternalError, `Prompt ${name} failed: ${String(cause)}`))
    : Effect.succeed(made)
  return Effect.map(messages, (list) => ({
    ...(prompt.description === undefined ? {} : { description: prompt.description }),
    messages: list.map((message) => ({
      role: message.role,
      content: typeof message.content === "string" ? { type: "text" as const, text: message.content } : message.content
    }))
  })) as Effect.Effect<GetPromptResult, McpError>
}

/** An own property of a record a user declared, never one inherited from `Object.prototype`. */
const own = <A>(record: Readonly<Record<string, A>> | undefined, key: string): A | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined

const tooLong = (field: string, cap: number) =>
  new McpError(ErrorCode.InvalidParams, `${field} is longer than ${cap.toLocaleString("en-US")} characters`)

/** `completion/complete`: the fixed values of a prompt argument or template variable that start with the value. */
export const complete = (catalog: Catalog, params: CompleteRequest["params"]): CompleteResult => {
  const { ref, argument } = params
  const name = ref.type === "ref/prompt" ? ref.name : ref.uri
  if (name.length > (ref.type === "ref/prompt" ? maxNameLength : maxUriLength)) {
    throw tooLong(
      ref.type === "ref/prompt" ? "ref.name" : "ref.uri",
      ref.type === "ref/prompt" ? maxNameLength : maxUriLength
    )
  }
  if (argument.name.length > maxNameLength) throw tooLong("argument.name", maxNameLength)
  if (argument.value.length > maxUriLength) throw tooLong("argument.value", maxUriLength)
  const declared =
    ref.type === "ref/prompt"
      ? own(catalog.prompts.find((prompt) => prompt.name === ref.name)?.arguments, argument.name)?.values
      : own(catalog.templates.find((template) => template.uriTemplate === ref.uri)?.variables, argument.name)
  const values: ReadonlyArray<string> = Array.isArray(declared) ? declared : []
  const matching = values.filter((value) => value.startsWith(argument.value))
  return {
    completion: {
      values: matching.slice(0, maxCompletions),
      total: matching.length,
      hasMore: matching.length > maxCompletions
    }
  }
}
