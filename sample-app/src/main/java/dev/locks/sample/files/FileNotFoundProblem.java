package dev.locks.sample.files;

/** A path that does not exist (or is another kind of entry than the request needs). */
public class FileNotFoundProblem extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public FileNotFoundProblem(String message) {
        super(message);
    }
}
