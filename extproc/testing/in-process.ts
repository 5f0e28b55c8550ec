/** extproc in the test's own process, from the same flags its process takes: the test kit's starter. */
export { startExtprocInProcess, type InProcessExtproc } from '../../kit/in-process.js';
