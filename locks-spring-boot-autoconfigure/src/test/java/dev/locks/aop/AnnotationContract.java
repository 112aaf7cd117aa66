package dev.locks.aop;

import dev.locks.testing.TestDatabase;

/** What every annotation contract runs on: the database its enclosing test class names. */
abstract class AnnotationContract {

    /** @return the database under test: by default that of the enclosing class's {@link AnnotationsOn} */
    protected TestDatabase database() {
        Class<?> enclosing = getClass().getEnclosingClass();
        AnnotationsOn target = enclosing != null ? enclosing.getAnnotation(AnnotationsOn.class) : null;
        if (target == null) {
            throw new IllegalStateException(getClass().getName() + " names no database: override database() or"
                    + " annotate its enclosing class with @AnnotationsOn");
        }
        return target.value();
    }
}
