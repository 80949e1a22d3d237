/** Sleeps that `wakeAll()` ends early, so a stopping worker leaves no timer behind. */
export class Sleeper {
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeping.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeping.add(entry);
    });
  }

  wakeAll(): void {
    for (const entry of this.sleeping) {
      clearTimeout(entry.timer);
      entry.resolve();
    }
    this.sleeping.clear();
  }
}
