/**
 * Every runner checks the other runners' health itself.
 *
 * Effect's cluster checks runner health in one singleton, which lives on one
 * runner's shard. When that runner is the one that dies, no runner checks
 * health until the singleton's shard moves, and the shard only moves once the
 * dead runner's heartbeat is older than `shardLockExpiration`: so half of the
 * time (with two runners) a crashed runner's shards wait out the expiration.
 *
 * This watch runs the same check on every runner: every
 * `runnerHealthCheckInterval` it pings the other runners through the given
 * `RunnerHealth` ({@link layerPing}: Effect's ping over the runners' sockets;
 * a dead process's socket refuses the connection at once) and records a
 * runner that does not answer as unhealthy, and
 * one that answers again as healthy, as the singleton does. Every runner then
 * drops the dead runner from its shard assignments at its next assignment
 * refresh. The shard locks stay what they are: a shard moves only once its
 * advisory lock is free, which a dead process's closed Postgres session
 * frees at once.
 *
 * A runner records nothing while it is itself unhealthy or not registered,
 * and reads its own health again right before it records another runner
 * unhealthy; a runner whose address sorts later waits one round more before
 * it acts. So two runners that cannot reach
 * each other do not record each other at once and leave the cluster without a
 * healthy runner.
 *
 * @internal
 */
import type * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

type Address = RunnerAddress.RunnerAddress

const keyOf = (address: Address): string => `${address.host}:${address.port}`

/**
 * Rounds in a row a runner must miss before this runner records it
 * unhealthy: one when this runner's address sorts first, two otherwise. Two
 * runners that cannot reach each other (but reach the database) then never
 * both record the other at once: the first-sorting one acts a round earlier,
 * and the other, reading its own health again before it writes, finds itself
 * recorded and stands down.
 */
const missesNeeded = (self: Address, other: Address): number => (keyOf(self) < keyOf(other) ? 1 : 2)

/**
 * One round: the runners in storage, each other runner pinged, a changed
 * health recorded. `misses` counts each runner's rounds in a row without an
 * answer (kept across rounds by the watch). Before recording a runner
 * unhealthy this runner reads storage again and does nothing unless it is
 * itself still healthy, so the cluster keeps a healthy runner.
 */
export const checkOnce = (
  misses: Map<string, number>
): Effect.Effect<
  void,
  never,
  RunnerHealth.RunnerHealth | RunnerStorage.RunnerStorage | ShardingConfig.ShardingConfig
> =>
  Effect.gen(function* () {
    const config = yield* ShardingConfig.ShardingConfig
    const self = config.runnerAddress
    if (Option.isNone(self)) return
    const storage = yield* RunnerStorage.RunnerStorage
    const health = yield* RunnerHealth.RunnerHealth
    const isSelf = (address: Address) => Equal.equals(address, self.value)
    const selfHealthy = (rows: ReadonlyArray<readonly [{ readonly address: Address }, boolean]>) =>
      rows.some(([runner, healthy]) => healthy && isSelf(runner.address))
    const runners = yield* storage.getRunners
    if (!selfHealthy(runners)) return
    const unhealthy = (address: Address) =>
      Effect.flatMap(storage.getRunners, (now) => {
        if (!selfHealthy(now)) return Effect.void
        return Effect.andThen(Effect.logDebug("Runner is unhealthy", address), storage.setRunnerHealth(address, false))
      })
    yield* Effect.forEach(
      runners,
      ([runner, healthy]) =>
        isSelf(runner.address)
          ? Effect.void
          : Effect.flatMap(health.isAlive(runner.address), (alive) => {
              const key = keyOf(runner.address)
              if (alive) {
                misses.delete(key)
                return healthy
                  ? Effect.void
                  : Effect.andThen(
                      Effect.logDebug("Runner is healthy", runner.address),
                      storage.setRunnerHealth(runner.address, true)
                    )
              }
              const missed = (misses.get(key) ?? 0) + 1
              misses.set(key, missed)
              return healthy && missed >= missesNeeded(self.value, runner.address)
                ? unhealthy(runner.address)
                : Effect.void
            }),
      { concurrency: 10, discard: true }
    )
  }).pipe(
    Effect.catchCause((cause) => Effect.logDebug("Runner health check failed", cause)),
    Effect.annotateLogs({ module: "@rolecraft/durable", fiber: "Runner watch" })
  )

/**
 * The watch's pings: Effect's `Runners.ping`, each given 10 seconds (a loaded runner that answers late is
 * alive), a failed one tried twice more 250 ms apart. Effect's own health check tries 5 more times 500 ms apart
 * (2.5 s per dead runner); a process that died refuses the connection at once, so 0.5 s tells it, and the watch
 * then judges a dead runner in about one `runnerHealthCheckInterval`, whichever runner died.
 */
export const layerPing: Layer.Layer<RunnerHealth.RunnerHealth, never, Runners.Runners> = Layer.effect(
  RunnerHealth.RunnerHealth,
  Effect.map(Effect.service(Runners.Runners), (runners) =>
    RunnerHealth.RunnerHealth.of({
      isAlive: (address) =>
        runners
          .ping(address)
          .pipe(
            Effect.timeout("10 seconds"),
            Effect.retry({ times: 2, schedule: Schedule.spaced("250 millis") }),
            Effect.isSuccess
          )
    })
  )
)

/** The watch, forked for the layer's lifetime, one round every `runnerHealthCheckInterval`. */
export const layer: Layer.Layer<
  never,
  never,
  RunnerHealth.RunnerHealth | RunnerStorage.RunnerStorage | ShardingConfig.ShardingConfig
> = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* ShardingConfig.ShardingConfig
    const misses = new Map<string, number>()
    yield* checkOnce(misses).pipe(Effect.repeat(Schedule.spaced(config.runnerHealthCheckInterval)), Effect.forkScoped)
  })
)
