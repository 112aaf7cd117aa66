package dev.locks.sample.files;

/** A request that contradicts the tree: the target exists, a move into its own subtree, and so on. */
public class FileConflictProblem extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public FileConflictProblem(String message) {
        super(message);
    }
}
