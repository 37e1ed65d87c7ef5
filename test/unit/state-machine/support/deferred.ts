/** A promise with its resolve exposed, to hold a step open while a test acts. */
export class Deferred<T = void> {
  resolve!: (value: T) => void;
  readonly promise = new Promise<T>((resolve) => (this.resolve = resolve));
}
