/** A count with its noun, singular for one: `counted(1, 'capture')` is "1 capture", `counted(2, 'capture')` "2 captures". */
export function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
