/**
 * The client command the MCP conformance suite launches for every client
 * scenario (`<command> <server-url>`, the scenario's name in
 * MCP_CONFORMANCE_SCENARIO, its credentials in MCP_CONFORMANCE_CONTEXT as
 * JSON). Rolecraft's public API only: an agent whose `mcpServers` has the
 * scenario's server, over `McpClientSdk.layerOAuth` (OAuth through the MCP
 * SDK's client auth; tokens in `McpTokenStore.layerMemory`; the browser step
 * follows the test authorization server's redirects), with an
 * `McpElicitation` service that accepts every form with its defaults. The
 * scenario's context chooses the grant: client credentials (a secret or a
 * private key JWT), a pre-registered client, or the JWT bearer grant of an
 * identity assertion this command gets from the scenario's identity provider
 * (RFC 8693 token exchange); else authorization code with registration or
 * the suite's client metadata document URL.
 *
 * It lists the server's tools the way an agent does — a chat turn offers
 * them to the model (`ScriptedModel`, which records what it was offered) —
 * then calls the scenario's tool with `agent.executeAction`. Exit 0 when
 * every step succeeded, 1 otherwise (the failure printed).
 *
 * Run: node --conditions=@rolecraft/source scripts/mcp-conformance/client.ts <server-url>
 */
import { Agent, McpClient } from "@rolecraft/core"
import { McpClientSdk, McpElicitation, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Layer, Redacted } from "effect"

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const url = process.argv[2]
if (url === undefined) {
  console.error("usage: client.ts <server-url> (MCP_CONFORMANCE_SCENARIO set)")
  process.exit(2)
}

interface Context {
  readonly client_id?: string
  readonly client_secret?: string
  readonly private_key_pem?: string
  readonly signing_algorithm?: string
  readonly idp_client_id?: string
  readonly idp_id_token?: string
  readonly idp_token_endpoint?: string
}
const context: Context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")

// The tool each scenario's server expects to be called.
const calls: Record<string, { readonly tool: string; readonly arguments: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: "add_numbers", arguments: { a: 5, b: 3 } },
  "elicitation-sep1034-client-defaults": { tool: "test_client_elicitation_defaults", arguments: {} },
  "sse-retry": { tool: "test_reconnection", arguments: {} }
}
const call = scenario.startsWith("auth/") ? { tool: "test-tool", arguments: {} } : calls[scenario]

// The scenario's OAuth: a client credentials grant, a pre-registered client, or registration (the suite's
// client metadata document URL where the authorization server supports it).
const grant = (): McpOAuth.Options["grant"] => {
  if (scenario === "auth/client-credentials-basic" && context.client_id && context.client_secret) {
    return { _tag: "ClientSecret", clientId: context.client_id, clientSecret: Redacted.make(context.client_secret) }
  }
  if (scenario === "auth/client-credentials-jwt" && context.client_id && context.private_key_pem) {
    return {
      _tag: "PrivateKeyJwt",
      clientId: context.client_id,
      privateKey: Redacted.make(context.private_key_pem),
      algorithm: context.signing_algorithm ?? "ES256"
    }
  }
  if (scenario === "auth/cross-app-access-complete-flow" && context.client_id && context.client_secret) {
    return {
      _tag: "JwtBearer",
      clientId: context.client_id,
      clientSecret: Redacted.make(context.client_secret),
      assertion: idJag
    }
  }
  return "authorization_code"
}

// Enterprise-managed authorization: the identity provider's ID token exchanged (RFC 8693) for an identity
// assertion grant for this authorization server and resource.
const idJag: McpOAuth.JwtBearer["assertion"] = ({ authorizationServer, resource }) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(context.idp_token_endpoint ?? "", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: context.idp_id_token ?? "",
          subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
          requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
          audience: authorizationServer,
          resource,
          client_id: context.idp_client_id ?? ""
        })
      })
      const body = (await response.json()) as { readonly access_token?: string; readonly error?: string }
      if (body.access_token === undefined)
        throw new Error(`the token exchange failed: ${body.error ?? response.status}`)
      return Redacted.make(body.access_token)
    },
    catch: (error) =>
      new McpClient.McpClientError({ reason: "Connect", sent: false, message: String(error), cause: error })
  })
const oauth: McpOAuth.Options = {
  redirectUrl: "http://localhost:3000/callback",
  clientName: "rolecraft-conformance",
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
  grant: grant(),
  ...(scenario === "auth/pre-registration" && context.client_id
    ? {
        client: {
          clientId: context.client_id,
          ...(context.client_secret ? { clientSecret: Redacted.make(context.client_secret) } : {})
        }
      }
    : {})
}

const client = McpClientSdk.layerOAuth(oauth, { connectTimeout: "20 seconds", listTimeout: "20 seconds" }).pipe(
  Layer.provide([
    McpTokenStore.layerMemory,
    McpOAuth.layerFollowRedirects,
    McpElicitation.layer(() => Effect.succeed({ action: "accept", content: {} }))
  ])
)

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "conformance-client", roles: [], mcpServers: { x: url } })
  let offered: ReadonlyArray<string> = []
  const listed = yield* agent.chat("List the tools.", { maxSteps: 1 }).pipe(
    Effect.provide(
      ScriptedModel.layer([
        ScriptedModel.respond((request) => {
          offered = (request.tools ?? []).map((tool) => tool.name)
          return ScriptedModel.reply("listed")
        })
      ])
    )
  )
  console.log(`tools offered to the model: ${JSON.stringify(offered)} (turn: ${listed._tag})`)
  if (call !== undefined) {
    const result = yield* agent.executeAction("x", { tool: call.tool, arguments: call.arguments })
    console.log(`${call.tool} -> ${JSON.stringify(result)}`)
  }
}).pipe(Effect.scoped, Effect.provide(client))

Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Success") process.exit(0)
  console.error(`FAILED: ${String(exit.cause)}`)
  process.exit(1)
})
