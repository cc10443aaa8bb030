// Prints where a desktop sandbox's pointer is, "x y", for desktop_test.go
// to check a click made through the stream.
import { Sandbox } from '@e2b/desktop'

const desk = await Sandbox.connect(process.argv[2])
const { x, y } = await desk.getCursorPosition()
console.log(`${x} ${y}`)
