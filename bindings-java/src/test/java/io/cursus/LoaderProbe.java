package io.cursus;

/** Run in a child JVM by {@link NativeLoaderTest}: prints where the library came from, or why not. */
public final class LoaderProbe {
    private LoaderProbe() {}

    /** Entry point. */
    public static void main(String[] args) {
        try {
            ClientConfig.options();
            System.out.println("LOADED " + NativeLib.loadedFrom());
        } catch (CursusException e) {
            System.out.println("FAILED " + e.code() + " " + e.getMessage());
        }
    }
}
