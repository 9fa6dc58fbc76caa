/**
 * mcpTool actions against stdio servers that misbehave (cases C14, C16, C17):
 * the fault fixture (SDK McpServer + StdioServerTransport) spawned for real.
 */
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { ConfigProvider, Duration, Effect, Exit, Scope } from "effect"
import { alive, collectLogs, counterFile, fixture, pidsIn, starts } from "./fixtures/mcp.ts"

const role = (actions: Record<string, Action.Any>) =>
  Role.make({ identity: { name: "ops", goal: "Operate tools", domain: "ops" }, actions })

const agentWith = (actions: Record<string, Action.Any>) => Agent.make({ id: "ops-agent", roles: [role(actions)] })

const Sdk = McpClientSdk.layer()

describe("mcpTool over stdio: faults", () => {
  it.live(
    "C14: banner lines on stdout are logged with the server's name and skipped; frames around them still work",
    () => {
      const logs = collectLogs()
      return Effect.gen(function* () {
        const agent = yield* agentWith({ noisy: Action.mcpTool({ description: "noisy", server: fixture("banner") }) })
        assert.strictEqual(
          yield* agent.executeAction("noisy", { tool: "echo", arguments: { message: "one" } }),
          "Echo: one"
        )
        // The server prints "[INFO] echo called" between the frames of every call.
        assert.strictEqual(
          yield* agent.executeAction("noisy", { tool: "echo", arguments: { message: "two" } }),
          "Echo: two"
        )
        const skipped = logs.lines.filter((line) => line.includes("wrote a line on stdout that is not JSON-RPC"))
        assert.isAtLeast(skipped.length, 4)
        assert.isTrue(skipped.every((line) => line.startsWith("Warn") && line.includes("MCP server noisy")))
        for (const banner of [
          "Azure DevOps MCP Server version : 1.2.3",
          "✅ Server started",
          '{"level":"info","msg":"valid JSON, but not JSON-RPC"}',
          "[INFO] echo called"
        ]) {
          assert.isTrue(
            skipped.some((line) => line.endsWith(`skipped: ${banner}`)),
            banner
          )
        }
      }).pipe(Effect.scoped, Effect.provide(Sdk), Effect.provide(logs.layer))
    }
  )

  it.live(
    "C16: a server killed mid-call fails promptly as TRANSIENT with the signal and stderr; not retried; the next call respawns",
    () =>
      Effect.gen(function* () {
        const counter = counterFile()
        const server = fixture("normal", counter)
        const agent = yield* agentWith({
          tools: Action.mcpTool({ description: "tools", server }).pipe(
            Action.resilience({ retry: { maxAttempts: 3, initialDelay: "10 millis" } })
          )
        })
        const first = Number(yield* agent.executeAction("tools", { tool: "pid" }))
        const error = yield* Effect.flip(agent.executeAction("tools", { tool: "bye" }))
        assert.strictEqual(error._tag, "TransientFailure")
        if (error._tag !== "TransientFailure") return
        assert.isTrue(error.outcomeUnknown)
        assert.isFalse(error.retryable)
        assert.include(error.message, "tools/bye")
        assert.include(error.message, "killed by SIGKILL")
        assert.include(error.message, "bye: killing myself with SIGKILL")
        assert.strictEqual(starts(counter), 1, "a call that reached the server is not retried")
        const second = Number(yield* agent.executeAction("tools", { tool: "pid" }))
        assert.notStrictEqual(second, first)
        assert.strictEqual(starts(counter), 2)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C16: an idempotent action is retried after a crash, each retry on a fresh process", () =>
    Effect.gen(function* () {
      const counter = counterFile()
      const agent = yield* agentWith({
        tools: Action.mcpTool({ description: "tools", server: fixture("normal", counter), idempotent: true }).pipe(
          Action.resilience({ retry: { maxAttempts: 1, initialDelay: "10 millis" } })
        )
      })
      const error = yield* Effect.flip(agent.executeAction("tools", { tool: "exit" }))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.include(error.message, "exit code 7")
      assert.include(error.message, "exit: leaving with code 7")
      assert.isTrue(error._tag === "TransientFailure" && error.retryable)
      assert.strictEqual(starts(counter), 2)
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C16: a server that stops reading and exits while a large request is blocked fails the call promptly", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({ tools: Action.mcpTool({ description: "tools", server: fixture("normal") }) })
      assert.strictEqual(yield* agent.executeAction("tools", { tool: "pause-and-exit" }), "paused")
      const message = "x".repeat(8 * 1024 * 1024)
      const error = yield* Effect.flip(agent.executeAction("tools", { tool: "echo", arguments: { message } })).pipe(
        Effect.timeout("10 seconds")
      )
      assert.strictEqual(error._tag, "TransientFailure")
      assert.include(error.message, "exit code 9")
      assert.include(error.message, "pause-and-exit: exiting with code 9")
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "a server that exits at once: TRANSIENT with its exit code and stderr, then backoff instead of a respawn loop",
    () =>
      Effect.gen(function* () {
        const counter = counterFile()
        const agent = yield* agentWith({
          broken: Action.mcpTool({ description: "broken", server: fixture("exit-at-once", counter) })
        })
        const first = yield* Effect.flip(agent.executeAction("broken", { tool: "echo", arguments: { message: "hi" } }))
        assert.strictEqual(first._tag, "TransientFailure")
        assert.include(first.message, "exit code 3")
        assert.include(first.message, "the configuration file /etc/demo.conf is missing")
        const second = yield* Effect.flip(agent.executeAction("broken", { tool: "echo", arguments: { message: "hi" } }))
        assert.strictEqual(second._tag, "TransientFailure")
        assert.include(second.message, "not reconnecting")
        assert.isTrue(second._tag === "TransientFailure" && second.retryAfter !== undefined)
        assert.strictEqual(starts(counter), 1, "no respawn while backing off")
        yield* Effect.sleep("600 millis")
        const third = yield* Effect.flip(agent.executeAction("broken", { tool: "echo", arguments: { message: "hi" } }))
        assert.include(third.message, "exit code 3")
        assert.strictEqual(starts(counter), 2)
        const fourth = yield* Effect.flip(agent.executeAction("broken", { tool: "echo", arguments: { message: "hi" } }))
        assert.isTrue(
          fourth._tag === "TransientFailure" &&
            fourth.retryAfter !== undefined &&
            Duration.toMillis(fourth.retryAfter) > 600,
          "the backoff doubles"
        )
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("a server slow to start: the first call waits for it", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({ slow: Action.mcpTool({ description: "slow", server: fixture("slow-start") }) })
      assert.strictEqual(
        yield* agent.executeAction("slow", { tool: "echo", arguments: { message: "late" } }),
        "Echo: late"
      )
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live("C17: past its timeout a call is TIMEOUT and cancelled on the server; the next call is not held up", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({
        tools: Action.mcpTool({ description: "tools", server: fixture("normal"), timeout: "300 millis" })
      })
      // The first calls also wait for the server to spawn, which the 300 ms timeout bounds too (the
      // spawn goes on in the background); a later one has the attempt to itself.
      yield* agent.executeAction("tools", { tool: "pid" }).pipe(Effect.retry({ times: 50 }))
      const error = yield* Effect.flip(agent.executeAction("tools", { tool: "slow", arguments: { ms: 20_000 } }))
      assert.strictEqual(error._tag, "Timeout")
      const echoed = yield* agent
        .executeAction("tools", { tool: "echo", arguments: { message: "next" } })
        .pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(echoed, "Echo: next")
      // The server's stderr (shown when it dies) says it saw the cancellation.
      const crash = yield* Effect.flip(agent.executeAction("tools", { tool: "bye" }))
      assert.include(crash.message, "slow: cancelled after a request to stop")
    }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "apiKeyEnv over stdio: read through Config, in the child's environment under its name, redacted from errors",
    () => {
      const secret = "sk-stdio-5f1e2d"
      return Effect.gen(function* () {
        const agent = yield* agentWith({
          keyed: Action.mcpTool({ description: "keyed", server: fixture("normal"), apiKeyEnv: "FIXTURE_SECRET" })
        })
        const seen = yield* agent.executeAction("keyed", { tool: "env", arguments: { name: "FIXTURE_SECRET" } })
        assert.strictEqual(seen, secret)
        const crash = yield* Effect.flip(agent.executeAction("keyed", { tool: "bye" }))
        assert.include(crash.message, "secret [REDACTED]")
        assert.notInclude(inspect(crash, { depth: 10 }), secret)
        assert.notInclude(JSON.stringify(crash), secret)
      }).pipe(
        Effect.scoped,
        Effect.provide(Sdk),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { FIXTURE_SECRET: secret } })
        )
      )
    }
  )

  it.live("an unset apiKeyEnv variable is VALIDATION naming it, and nothing is spawned", () =>
    Effect.gen(function* () {
      const counter = counterFile()
      const agent = yield* agentWith({
        keyed: Action.mcpTool({ description: "keyed", server: fixture("normal", counter), apiKeyEnv: "NO_SUCH_KEY_X" })
      })
      const error = yield* Effect.flip(agent.executeAction("keyed", { tool: "echo", arguments: { message: "hi" } }))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "NO_SUCH_KEY_X")
      assert.strictEqual(starts(counter), 0)
    }).pipe(
      Effect.scoped,
      Effect.provide(Sdk),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
    )
  )

  it.live("calls share one connection per server and key; the child is gone when the agent's scope closes", () =>
    Effect.gen(function* () {
      const counter = counterFile()
      const server = fixture("normal", counter)
      const scope = yield* Scope.make()
      const agent = yield* agentWith({
        a: Action.mcpTool({ description: "a", server }),
        b: Action.mcpTool({ description: "b", server, tools: ["pid", "echo"] })
      }).pipe(Scope.provide(scope))
      const pids = yield* Effect.all(
        [
          agent.executeAction("a", { tool: "pid" }),
          agent.executeAction("b", { tool: "pid" }),
          agent.executeAction("a", { tool: "pid" })
        ],
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(pids).size, 1)
      assert.strictEqual(starts(counter), 1)
      const pid = Number(pids[0])
      assert.isTrue(alive(pid))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(alive(pid), "the server process is stopped with the agent")
    }).pipe(Effect.provide(Sdk))
  )
})

describe("mcpTool over stdio: what the server inherits, and a server that does not start", () => {
  /** Sets variables in this process's environment for the scope, restoring them after. */
  const withEnvironment = (variables: Readonly<Record<string, string>>) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const before = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]))
        Object.assign(process.env, variables)
        return before
      }),
      (before) =>
        Effect.sync(() => {
          for (const [name, value] of Object.entries(before)) {
            if (value === undefined) delete process.env[name]
            else process.env[name] = value
          }
        })
    )

  it.live(
    "a server inherits the CA, proxy (without user and password) and locale variables, never a credential-named one or an npm setting",
    () =>
      Effect.gen(function* () {
        yield* withEnvironment({
          NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/corporate-root-ca.pem",
          SSL_CERT_FILE: "/etc/ssl/cert.pem",
          HTTPS_PROXY: "http://alice:s3cret-proxy@proxy.internal:3128",
          http_proxy: "http://bob:hunter2@proxy.internal:3128/",
          NO_PROXY: "localhost,127.0.0.1",
          LC_ALL: "de_AT.UTF-8",
          GITHUB_TOKEN: "ghp_host-secret",
          SERVICE_API_KEY: "host-api-key",
          DATABASE_PASSWORD: "host-password",
          AWS_SECRET_ACCESS_KEY: "host-aws-secret",
          npm_config__authToken: "npm-host-token",
          "npm_config_//registry.npmjs.org/:_authToken": "npm-host-token-2",
          SOME_UNLISTED_SETTING: "not passed"
        })
        const agent = yield* agentWith({
          tools: Action.mcpTool({
            description: "tools",
            server: { ...fixture("normal"), env: { SERVICE_API_KEY: "given to this server" } }
          })
        })
        const seen = (name: string) => agent.executeAction("tools", { tool: "env", arguments: { name } })
        const expected: Record<string, string> = {
          NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/corporate-root-ca.pem",
          SSL_CERT_FILE: "/etc/ssl/cert.pem",
          HTTPS_PROXY: "http://proxy.internal:3128",
          http_proxy: "http://proxy.internal:3128/",
          NO_PROXY: "localhost,127.0.0.1",
          LC_ALL: "de_AT.UTF-8",
          PATH: process.env.PATH ?? "(unset)",
          // given in the server's env: passed, the host's own value not
          SERVICE_API_KEY: "given to this server",
          GITHUB_TOKEN: "(unset)",
          DATABASE_PASSWORD: "(unset)",
          AWS_SECRET_ACCESS_KEY: "(unset)",
          npm_config__authToken: "(unset)",
          "npm_config_//registry.npmjs.org/:_authToken": "(unset)",
          SOME_UNLISTED_SETTING: "(unset)"
        }
        const actual: Record<string, unknown> = {}
        for (const name of Object.keys(expected)) actual[name] = yield* seen(name)
        assert.deepStrictEqual(actual, expected)
      }).pipe(Effect.scoped, Effect.provide(Sdk))
  )

  it.live(
    "a server that never answers initialize fails naming the command and connectTimeout, and leaves no process behind",
    () =>
      Effect.gen(function* () {
        const counter = counterFile()
        const server = fixture("never-answers", counter)
        const agent = yield* agentWith({ late: Action.mcpTool({ description: "late", server }) })
        const started = Date.now()
        const error = yield* Effect.flip(agent.executeAction("late", { tool: "echo", arguments: { message: "hi" } }))
        assert.strictEqual(error._tag, "TransientFailure")
        assert.include(
          error.message,
          `could not connect to MCP server late (${server.command} ${server.args?.join(" ")})`
        )
        assert.include(error.message, "it did not answer initialize within 3 seconds (connectTimeout)")
        assert.include(error.message, "raise it with McpClientSdk.layer({ connectTimeout })")
        assert.include(error.message, "never-answers: fetching the server…", "the launcher's stderr is kept")
        // The launcher and the server it started (which ignores SIGTERM) are both gone when the failure is told.
        const pids = pidsIn(counter)
        assert.strictEqual(pids.length, 2, "the fixture and its child")
        assert.deepStrictEqual(
          pids.filter((pid) => alive(pid)),
          []
        )
        assert.isBelow(Date.now() - started, 10_000)
      }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer({ connectTimeout: "3 seconds" })))
  )
})
