/** The apiserver-stub in the test's own process, from the same flags its process takes: the test kit's starter. */
export { startStubInProcess, type InProcessStub } from '../../kit/in-process.js';
