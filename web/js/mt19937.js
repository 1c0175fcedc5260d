/**
 * Twin of Python's random.Random (MT19937): seed(int), getrandbits(k <= 32), randbelow, choice
 * and shuffle, bit for bit, so the ported random bot picks what agents/random_bot.py picks.
 */

const N = 624;
const M = 397;

export class PyRandom {
  constructor(seed = null) {
    this.mt = new Uint32Array(N);
    this.index = N + 1;
    this.seed(seed);
  }

  /** random.seed(int): init_by_array over the 32-bit words of |seed|; null seeds from crypto. */
  seed(seed) {
    let value;
    if (seed === null || seed === undefined) {
      const words = new Uint32Array(2);
      globalThis.crypto.getRandomValues(words);
      value = (BigInt(words[0]) << 32n) | BigInt(words[1]);
    } else {
      value = BigInt(seed);
    }
    if (value < 0n) value = -value;
    const key = [];
    while (value > 0n) {
      key.push(Number(value & 0xffffffffn));
      value >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.#initByArray(key);
  }

  #initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  #initByArray(key) {
    const mt = this.mt;
    this.#initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  #twist() {
    const mt = this.mt;
    for (let kk = 0; kk < N; kk++) {
      const y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7fffffff);
      mt[kk] = (mt[(kk + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    this.index = 0;
  }

  genrandUint32() {
    if (this.index >= N) this.#twist();
    let y = this.mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** getrandbits(k) for 1 <= k <= 32. */
  getrandbits(k) {
    return this.genrandUint32() >>> (32 - k);
  }

  /** _randbelow_with_getrandbits(n): rejection sampling on n.bit_length() bits. */
  randbelow(n) {
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  choice(seq) {
    if (seq.length === 0) throw new RangeError("Cannot choose from an empty sequence");
    return seq[this.randbelow(seq.length)];
  }

  /** random.shuffle: Fisher-Yates from the back, in place. */
  shuffle(x) {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }
}
