import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// The packages export `dist/` by default and their TypeScript sources under the
// `@rolecraft/source` condition: tests always run the sources, never a stale build.
const source = "@rolecraft/source"
// Node loads an external dependency from the path vite resolved: the bundlers' "module" condition can pick
// an ESM build Node cannot run (@opentelemetry/api's has extensionless imports), so it is left out on the server.
const serverConditions = defaultServerConditions.filter((condition) => condition !== "module")

export default defineConfig({
  resolve: { conditions: [source, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [source, ...serverConditions] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts", "bench/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn real MCP servers and HTTP servers; two cores run two forks well.
    pool: "forks",
    // One Postgres 15 for the run (ROLECRAFT_PG_URL when set, else started and stopped here).
    globalSetup: ["test/setup/postgres.ts", "test/setup/seed.ts"],
    // Every random value of a test comes from one seed per run, printed on failure (test/support/seeded.ts).
    setupFiles: ["test/setup/seeded.ts"]
  }
})
