/**
 * The mcpTool executor: one direct call `{ tool, arguments }` of an
 * MCP server's tool, over the agent's shared connection to that server, with
 * every failure turned into one of the nine categories.
 *
 * The attempt: read the `McpClient` service (missing → VALIDATION) and the
 * credential (`apiKeyEnv` through Effect `Config`; unset → VALIDATION naming
 * it); then the call itself (`mcpTool/call.ts`): get the connection (opened
 * lazily, shared, reconnected after a crash: `mcpTool/connection.ts`), find
 * the tool, convert `arguments` against its `inputSchema`, call it, turn the
 * result into a value (`mcpTool/content.ts`). Every error leaves through
 * `scrub` with the credential.
 */
import type * as ConfigModule from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Action from "../../Action.ts"
import { type ActionError, ValidationError } from "../../ActionError.ts"
import { describeServer, McpClient, type ToolDefinition } from "../../McpClient.ts"
import * as Role from "../../Role.ts"
import * as Lazy from "../lazy.ts"
import * as Redact from "../redact.ts"
import { allowed, type Call, listed, prepare, run, within } from "./mcpTool/call.ts"
import { type Credential, connectionOf } from "./mcpTool/connection.ts"
import type * as DefinitionDigest from "../approvals/definition.ts"
import type { AgentRuntime } from "./runtime.ts"

const notProvided = (name: string) =>
  new ValidationError({
    action: name,
    message: `${name}: McpClient not provided (provide McpClientSdk.layer from @rolecraft/mcp, or a test layer)`,
    issues: [{ path: "", message: "the McpClient service is not provided" }]
  })

// Only an action that names a credential reads the environment through Effect's Config.
const Config = Lazy.make((): Promise<typeof ConfigModule> => import("effect/Config"))

// The Config reading each credential variable, made once per name: making one compiles its schema (~0.1 ms).
const configs = new Map<string, ConfigModule.Config<Redacted.Redacted<string>>>()
const maxConfigs = 1024
const credentialConfig = (Config: typeof ConfigModule, variable: string) => {
  const known = configs.get(variable)
  if (known !== undefined) return known
  const made = Config.Redacted(variable)
  if (configs.size < maxConfigs) configs.set(variable, made)
  return made
}

const readCredential = (
  name: string,
  variable: string | undefined
): Effect.Effect<Credential | undefined, ValidationError> =>
  variable === undefined
    ? Effect.succeed(undefined)
    : Config.use((Config) => credentialConfig(Config, variable)).pipe(
        Effect.mapError(
          () =>
            new ValidationError({
              action: name,
              message: `${name}: the credential variable ${variable} (apiKeyEnv) is not set`,
              issues: [{ path: "apiKeyEnv", message: `the variable ${variable} is not set` }]
            })
        ),
        Effect.flatMap((value) =>
          Redacted.value(value).length < Redact.minimumSecretLength
            ? Effect.fail(
                new ValidationError({
                  action: name,
                  message: `${name}: the credential variable ${variable} (apiKeyEnv) is shorter than ${Redact.minimumSecretLength} characters`,
                  issues: [
                    {
                      path: "apiKeyEnv",
                      message: `the value of ${variable} is shorter than ${Redact.minimumSecretLength} characters`
                    }
                  ]
                })
              )
            : Effect.succeed<Credential>({ variable, value })
        )
      )

// An environment variable named like a credential (`GITHUB_TOKEN`, `API_KEY`, `DB_PASSWORD`, …).
const credentialName = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE/i

/**
 * The credentials a stdio server is given in its environment: the values of
 * the variables named like one (a name holding KEY, TOKEN, SECRET, PASSWORD,
 * PASSWD, CREDENTIAL, AUTH or COOKIE, in any case) with at least 8
 * characters.
 */
export const environmentSecrets = (server: Action.McpServer): ReadonlyArray<Redacted.Redacted<string>> =>
  typeof server === "string"
    ? []
    : Object.entries(server.env ?? {}).flatMap(([name, value]) =>
        credentialName.test(name) && value.length >= Redact.minimumSecretLength ? [Redacted.make(value)] : []
      )

/**
 * The credentials a call of `action` holds, for redacting what runs around it
 * (its result mapper, fallback, its role's hooks): the `apiKeyEnv` value
 * (none when unset or refused) and the credentials in a stdio server's
 * environment.
 */
export const secretsOf = (
  action: Action.McpTool<any, any>
): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> => {
  const given = environmentSecrets(action.server)
  return readCredential("", action.apiKeyEnv).pipe(
    Effect.map((credential) => (credential === undefined ? given : [credential.value, ...given])),
    Effect.orElseSucceed(() => given)
  )
}

const withService = <A>(
  name: string,
  action: Action.McpTool<any, any>,
  body: (client: McpClient["Service"], credential: Credential | undefined) => Effect.Effect<A, ActionError>
): Effect.Effect<A, ActionError> =>
  Effect.flatMap(Effect.serviceOption(McpClient), (client) => {
    if (Option.isNone(client)) return Effect.fail(notProvided(name))
    if (action.apiKeyEnv === undefined) return body(client.value, undefined)
    return Effect.flatMap(readCredential(name, action.apiKeyEnv), (credential) =>
      Effect.mapError(body(client.value, credential), (error) =>
        credential === undefined ? error : Redact.scrub(error, [credential.value])
      )
    )
  })

/**
 * One attempt of a call of the server's `tool` with its arguments (see the
 * module doc); the call value took `{ tool, arguments }` apart where the call
 * entered.
 *
 * Fails with: VALIDATION (no McpClient, unset credential variable, arguments
 * that do not fit the tool's input schema or that the server refuses),
 * NOT_FOUND (no such tool, or one outside the allow-list; `available` lists
 * the tools that may be called), EXECUTION (the tool answered `isError`, a
 * JSON-RPC error, an HTTP 4xx), TIMEOUT (retryable only for `idempotent`
 * actions: the request was sent), TRANSIENT (connect failure, server
 * exit or transport loss with its exit status and stderr tail, protocol
 * garbage, HTTP 429/5xx; `outcomeUnknown` when the request had been sent,
 * then retryable only for `idempotent` actions).
 */
export const execute = (call: Call): Effect.Effect<unknown, ActionError> =>
  withService(call.name, call.action, (client, credential) => run(call, client, credential))

/**
 * The tools an mcpTool action offers: its server's list (every page,
 * cached), filtered by the action's allow-list. For chat turns.
 */
export const listTools = (
  call: Omit<Call, "args" | "tool">,
  refresh = false
): Effect.Effect<ReadonlyArray<ToolDefinition>, ActionError> =>
  withService(call.name, call.action, (client, credential) =>
    Effect.scoped(
      Effect.clockWith((clock) => {
        const withArgs = { ...call, tool: "", args: {} }
        const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(prepare(call.action).timeout)
        const left = () => deadline - clock.currentTimeMillisUnsafe()
        const connection = connectionOf(withArgs, client, credential, prepare(call.action))
        const opened = within(call, call.name, left(), "connecting", connection.get)
        return Effect.flatMap(opened, (connection) =>
          Effect.map(
            within(call, call.name, left(), "listing its tools", listed(withArgs, connection, refresh)),
            (tools) => allowed(call.action, tools)
          )
        )
      })
    )
  )

/**
 * How the approval step reads the definition of a tool of `action`'s server (the allowed list, afresh with
 * `refresh`), and publishes that one changed since its approval was asked (`McpToolDefinitionChanged`).
 */
export const definitions = (
  name: string,
  action: Action.McpTool<any, any>,
  agent: AgentRuntime
): DefinitionDigest.Definition => ({
  find: (tool, refresh) =>
    Effect.map(listTools({ name, action, agent }, refresh), (tools) => tools.find((listed) => listed.name === tool)),
  changed: (tool, changed, message) =>
    agent.mcp.publish((agentId, timestamp) => ({
      _tag: "McpToolDefinitionChanged",
      agentId,
      action: name,
      server: describeServer(action.server),
      tool,
      changed,
      message,
      timestamp
    }))
})

/**
 * What `Agent.make({ mcpServers })` accepts for one server: a stdio command
 * or URL (no credential, all tools, the default timeout), or a full mcpTool
 * action.
 */
export type ServerOption = Action.McpServer | Action.McpTool<unknown, unknown>

/**
 * The agent's own MCP servers (`Agent.make({ mcpServers })`) as a role of
 * mcpTool actions named by their keys; `undefined` when there are none.
 */
export const serversRole = (servers: Readonly<Record<string, ServerOption>> | undefined): Role.Any | undefined => {
  const entries = Object.entries(servers ?? {})
  if (entries.length === 0) return undefined
  return Role.make({
    identity: { name: "mcpServers", goal: "Use the tools of the agent's MCP servers", domain: "mcp" },
    actions: Object.fromEntries(
      entries.map(([key, server]) => [
        key,
        Action.isAction(server)
          ? server
          : Action.mcpTool({ description: `Tools of the MCP server ${key} (${describeServer(server)})`, server })
      ])
    )
  })
}
